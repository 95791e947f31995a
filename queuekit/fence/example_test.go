package fence_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/fence"
)

// A holder's end is its own update under the fencing condition; a refusal
// is classified as fenced when the item's image shows another tenure.
func Example() {
	f := fence.Default
	grant := f.Acquire(4, "worker-1", time.UnixMilli(60_000)) // read at token 4
	end := f.Release(grant.Hold)
	end.Update = end.Update.Set(expression.Name("state"), expression.Value("DONE"))
	if _, err := expression.NewBuilder().WithCondition(end.Cond).WithUpdate(end.Update).Build(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("holds:", grant.Hold.Holder, "at token", grant.Hold.Token)

	// The reaper revoked the lease (token 6) and worker-2 took it (token 7)
	// while worker-1 slept; DynamoDB refuses worker-1's end.
	refused := &types.ConditionalCheckFailedException{Item: map[string]types.AttributeValue{
		f.Token:  &types.AttributeValueMemberN{Value: "7"},
		f.Holder: &types.AttributeValueMemberS{Value: "worker-2"},
	}}
	err := f.Check(refused, "end", grant.Hold)
	fmt.Println(errors.Is(err, fence.ErrFenced))
	fmt.Println(err)
	// Output:
	// holds: worker-1 at token 5
	// true
	// end fenced: worker-1 no longer holds the lease of token 5 (the item is at token 7, held by worker-2)
}

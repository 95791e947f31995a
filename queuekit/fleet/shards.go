package fleet

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fence"
)

// shardKey is the key of shard k's item.
func shardKey(k int) map[string]types.AttributeValue { return key("SHARD", fmt.Sprintf("%04d", k)) }

// Tenure is one entry of a shard's ownership history.
type Tenure struct {
	Token  int64  `dynamodbav:"t" json:"token"`
	Holder string `dynamodbav:"h" json:"holder"`
	Op     string `dynamodbav:"op" json:"op"` // "acquire" or "release"
	AtMS   int64  `dynamodbav:"at" json:"at_ms"`
	// PrevUntilMS is, for an acquire, the lease end of the tenure it took
	// over (0: the shard was free).
	PrevUntilMS int64 `dynamodbav:"prev_until" json:"prev_until_ms"`
}

// ShardState is one shard item as read.
type ShardState struct {
	Shard   int      `dynamodbav:"shard" json:"shard"`
	Token   int64    `dynamodbav:"fence_token" json:"token"`
	Holder  string   `dynamodbav:"holder" json:"holder"`
	UntilMS int64    `dynamodbav:"lease_until" json:"until_ms"`
	History []Tenure `dynamodbav:"history" json:"history"`
}

// ShardStates reads every shard item with one Query (pk = SHARD), strongly
// consistent.
func (f *Fleet) ShardStates(ctx context.Context) ([]ShardState, error) {
	in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "SHARD"}}}
	var out []ShardState
	for page, err := range f.cat.DB().QueryPages(ctx, in) {
		if err != nil {
			return nil, fmt.Errorf("read shard items: %w", err)
		}
		for _, it := range page.Items {
			var s ShardState
			if err := attributevalue.UnmarshalMap(it, &s); err != nil {
				return nil, fmt.Errorf("shard item %v: %w", it[attrSK], err)
			}
			sk, _ := it[attrSK].(*types.AttributeValueMemberS)
			if sk != nil {
				s.Shard, _ = strconv.Atoi(sk.Value)
			}
			out = append(out, s)
		}
	}
	return out, nil
}

// acquireShard takes shard k at the token seen: condition At(seen) and the
// shard free or its lease ended; appends an acquire entry to its history.
func (f *Fleet) acquireShard(ctx context.Context, w *writes, k int, seen ShardState, holder string) (fence.Hold, time.Time, error) {
	now := f.now()
	step := jobFence.Acquire(fence.Token(seen.Token), holder, now.Add(f.opts.ShardLease))
	free := expression.AttributeNotExists(n(jobFence.Holder)).Or(jobFence.Expired(now))
	entry, err := attributevalue.MarshalList([]Tenure{{Token: int64(step.Hold.Token), Holder: holder, Op: "acquire", AtMS: now.UnixMilli(), PrevUntilMS: prevUntil(seen)}})
	if err != nil {
		return fence.Hold{}, now, err
	}
	upd := step.Update.Set(n("history"), expression.ListAppend(expression.IfNotExists(n("history"), v([]any{})), v(&types.AttributeValueMemberL{Value: entry}))).
		Set(n("shard"), v(k))
	_, err = f.update(ctx, w, shardKey(k), step.Cond.And(free), upd)
	return step.Hold, now, err
}

func prevUntil(s ShardState) int64 {
	if s.Holder == "" {
		return 0
	}
	return s.UntilMS
}

// renewShard is the heartbeat of a shard lease.
func (f *Fleet) renewShard(w *writes, k int, h fence.Hold) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		step := jobFence.Renew(h, until)
		_, err := f.update(ctx, w, shardKey(k), step.Cond, step.Update)
		return jobFence.Check(err, "renew shard "+strconv.Itoa(k), h)
	}
}

// releaseShard gives shard k back: condition Held(h), the token moves on,
// and a release entry is appended.
func (f *Fleet) releaseShard(ctx context.Context, w *writes, k int, h fence.Hold) error {
	step := jobFence.Release(h)
	entry, err := attributevalue.MarshalList([]Tenure{{Token: int64(h.Token), Holder: h.Holder, Op: "release", AtMS: f.now().UnixMilli()}})
	if err != nil {
		return err
	}
	upd := step.Update.Set(n("history"), expression.ListAppend(n("history"), v(&types.AttributeValueMemberL{Value: entry})))
	_, err = f.update(ctx, w, shardKey(k), step.Cond, upd)
	return jobFence.Check(err, "release shard "+strconv.Itoa(k), h)
}

// member is one MEMBER item.
type member struct {
	Name    string `dynamodbav:"holder"`
	UntilMS int64  `dynamodbav:"lease_until"`
}

// liveMembers reads the MEMBER items whose lease has not ended, sorted by
// name.
func (f *Fleet) liveMembers(ctx context.Context) ([]string, error) {
	in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression:    aws.String("pk = :p"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: "MEMBER"}}}
	now := f.now().UnixMilli()
	var names []string
	for page, err := range f.cat.DB().QueryPages(ctx, in) {
		if err != nil {
			return nil, fmt.Errorf("read members: %w", err)
		}
		var ms []member
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ms); err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.UntilMS > now && m.Name != "" {
				names = append(names, m.Name)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// Assign is the shard assignment every worker computes from the same live
// members: shard k goes to members[k mod len(members)] (members sorted).
func Assign(members []string, shards int, name string) []int {
	idx := sort.SearchStrings(members, name)
	if idx >= len(members) || members[idx] != name {
		return nil
	}
	var mine []int
	for k := idx; k < shards; k += len(members) {
		mine = append(mine, k)
	}
	return mine
}

// join starts a fresh membership tenure of name: one UpdateItem moves the
// MEMBER item's token on (whatever was there: a restarted worker of the
// same name fences its previous incarnation's renewals), names the holder
// and sets the lease's end.
func (f *Fleet) join(ctx context.Context, w *writes, name string) (fence.Hold, time.Time, error) {
	now := f.now()
	upd := expression.Set(n(jobFence.Token), expression.Plus(expression.IfNotExists(n(jobFence.Token), v(0)), v(1))).
		Set(n(jobFence.Holder), v(name)).Set(n(jobFence.Until), v(now.Add(f.opts.ShardLease).UnixMilli()))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return fence.Hold{}, now, err
	}
	w.requests++
	out, err := catalog.Call(ctx, f.cat, func(ctx context.Context) (*dynamodb.UpdateItemOutput, error) {
		return f.client().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.Table()), Key: key("MEMBER", name),
			UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValues: types.ReturnValueAllNew})
	})
	if err != nil {
		return fence.Hold{}, now, fmt.Errorf("join the fleet as %s: %w", name, err)
	}
	return jobFence.HoldOf(out.Attributes), now, nil
}

// renewMember is the heartbeat of the membership lease.
func (f *Fleet) renewMember(w *writes, h fence.Hold) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		step := jobFence.Renew(h, until)
		_, err := f.update(ctx, w, key("MEMBER", h.Holder), step.Cond, step.Update)
		return jobFence.Check(err, "renew membership", h)
	}
}

// leave ends the membership: its lease end is set to now, so the others
// rebalance at their next look.
func (f *Fleet) leave(ctx context.Context, w *writes, h fence.Hold) error {
	step := jobFence.Renew(h, f.now())
	_, err := f.update(ctx, w, key("MEMBER", h.Holder), step.Cond, step.Update)
	return jobFence.Check(err, "leave", h)
}

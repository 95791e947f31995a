package leaselab_test

import (
	"context"
	"fmt"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/lab/leaselab"
)

// A claim whose reply is lost after it landed, for real against DynamoDB
// Local: the SDK sends it again, and the worker still counts it as won
// (never as a lost race), so each job has one attempt and one end.
func ExampleRunLostReply() {
	r, err := leaselab.RunLostReply(context.Background(), leaselab.LostReplyConfig{}, catalog.WithTable("lab_example_lostreply"))
	if err != nil {
		fmt.Println(err)
		return
	}
	dropped, retried := 0, 0
	for _, t := range r.Tries {
		if t.Dropped {
			dropped++
		}
		if t.SDKAttempt > 1 {
			retried++
		}
	}
	fmt.Println("replies dropped:", dropped, "claims sent again:", retried > 0)
	fmt.Println("attempts:", len(r.Attempts), "won:", r.Won, "lost:", r.Lost, "SUCCESS:", r.Statuses["SUCCESS"])
	for _, a := range r.Attempts {
		fmt.Println(a.Attempt, a.ClaimToken, a.EndToken, a.Outcome)
	}
	// Output:
	// replies dropped: 1 claims sent again: true
	// attempts: 3 won: 3 lost: 0 SUCCESS: 3
	// 1 1 2 SUCCESS
	// 1 1 2 SUCCESS
	// 1 1 2 SUCCESS
}

// The same lost reply, but the SDK's retry reaches DynamoDB without its
// ClientRequestToken (as after the token's ten minutes): DynamoDB refuses
// it, and the worker still counts the claim as won by its claim_nonce.
func ExampleRunLostReply_forgetToken() {
	r, err := leaselab.RunLostReply(context.Background(), leaselab.LostReplyConfig{ForgetToken: true}, catalog.WithTable("lab_example_lostreply"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range r.Tries[:2] {
		fmt.Println(t.SDKAttempt, t.NoToken, t.Answer, t.Dropped)
	}
	fmt.Println("attempts:", len(r.Attempts), "won:", r.Won, "lost:", r.Lost, "SUCCESS:", r.Statuses["SUCCESS"])
	// Output:
	// 1 false OK true
	// 2 true TransactionCanceledException false
	// attempts: 3 won: 3 lost: 0 SUCCESS: 3
}

// Worker processes two leases ahead and two leases behind take over no
// healthy lease: every job ends SUCCESS in one attempt, and the run's
// verdict on the table's own orders holds.
func ExampleRunSkewedClocks() {
	r, err := leaselab.RunSkewedClocks(context.Background(), catalog.WithTable("lab_example_skew"))
	if err != nil {
		fmt.Println(err)
		return
	}
	reaped, fenced := 0, 0
	for _, w := range r.Workers {
		reaped += w.Counters.Reaped
		fenced += w.Counters.Fenced
		fmt.Println(w.Name, w.Offset)
	}
	fmt.Println("attempts:", r.Attempts, "jobs:", r.Jobs, "SUCCESS:", r.Statuses["SUCCESS"], "reaped:", reaped, "fenced:", fenced, "verdict:", r.Verify)
	// Output:
	// right 0s
	// ahead 4s
	// behind -4s
	// attempts: 9 jobs: 9 SUCCESS: 9 reaped: 0 fenced: 0 verdict: <nil>
}

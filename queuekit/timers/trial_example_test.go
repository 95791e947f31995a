package timers_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/timers"
)

// A trial schedules timers in fresh tables (deleted at the end), waits for
// DynamoDB Local's TTL sweep to fire them, and reports each fire as
// progress: Done timers fired of Total scheduled, as notebook 06 shows in a
// bar (Progress: bar.Report). DynamoDB Local is reached through
// AWS_ENDPOINT_URL_DYNAMODB.
func ExampleTrial() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	cat, err := catalog.New(ctx, catalog.WithTable("example_timers_"+hex.EncodeToString(b[:])))
	if err != nil {
		fmt.Println(err)
		return
	}
	var last queuekit.Progress
	r, err := timers.Trial{Count: 2, DueIn: time.Second, Progress: func(p queuekit.Progress) { last = p }}.Run(ctx, timers.New(cat))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("fired %d of %d, duplicates %d; last progress %d of %d\n", r.Fired, r.Scheduled, r.Duplicates, last.Done, last.Total)
	// Output:
	// fired 2 of 2, duplicates 0; last progress 2 of 2
}

package fanout_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/lab/fanoutlab"
)

// A fan-out over four generated nights, as notebook 07 runs it: each slice
// done is reported as progress (Progress: bar.Report in the notebook), and
// the run ends when every slice is done. DynamoDB Local and ElasticMQ are
// reached through AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_SQS.
func ExampleExecute() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	table := "example_fanout_" + hex.EncodeToString(b[:])
	defer func() {
		for _, name := range []string{table, table + "_results"} {
			if c, err := catalog.New(ctx, catalog.WithTable(name)); err == nil {
				_ = c.DeleteTable(ctx)
			}
		}
	}()
	cfg, err := fanoutlab.NightsFanOut(ctx, table, 4)
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.Processing = fanout.Processing{Workers: 2, Wait: time.Second}
	var last queuekit.Progress
	cfg.Progress = func(p queuekit.Progress) { last = p }
	out, err := fanout.Execute(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("processed %d of %d slices, %d dead-lettered; last progress %d of %d\n",
		out.Processed, out.Slices, len(out.DeadLettered), last.Done, last.Total)
	// Output:
	// processed 4 of 4 slices, 0 dead-lettered; last progress 4 of 4
}

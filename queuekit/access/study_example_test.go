package access_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/access"
	"github.com/nightqueue/workshop/queuekit/catalog"
)

// A study seeds a table per size and reads its first night with Query and
// with Scan. Its progress counts every item seeded and every read, so the
// last report is Done = Total; notebook 02 shows it in a bar (bar.Report).
// DynamoDB Local is reached through AWS_ENDPOINT_URL_DYNAMODB.
func ExampleStudy_Run() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	var tables []*catalog.Catalog
	defer func() {
		for _, c := range tables {
			_ = c.DeleteTable(ctx)
		}
	}()
	open := func(ctx context.Context, nights int) (*catalog.Catalog, error) {
		c, err := catalog.New(ctx, catalog.WithTable(fmt.Sprintf("example_qvs_%s_%d", hex.EncodeToString(b[:]), nights)))
		if err == nil {
			tables = append(tables, c)
		}
		return c, err
	}
	var last queuekit.Progress
	points, err := access.Study{Sizes: []int{2, 4}, Repeats: 1, Open: open, Progress: func(p queuekit.Progress) { last = p }}.Run(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range points {
		fmt.Printf("%d nights: Query read only the night: %v; Scan read every item: %v\n",
			p.Nights, p.Query.ScannedCount == p.Query.Count && p.Query.Count < p.Items, p.Scan.ScannedCount == p.Items)
	}
	fmt.Println("progress ended at its total:", last.Total > 0 && last.Done == last.Total)
	// Output:
	// 2 nights: Query read only the night: true; Scan read every item: true
	// 4 nights: Query read only the night: true; Scan read every item: true
	// progress ended at its total: true
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit/catalog"
)

// accessResult is the JSON form of the comparison.
type accessResult struct {
	Query catalog.AccessReport `json:"query"`
	Scan  catalog.AccessReport `json:"scan"`
}

func runAccess(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("access")
	date := fs.String("batch-date", "", "the night to read (YYYY-MM-DD), e.g. 2026-05-13 (required)")
	window := fs.String("window", "", "only one requested window (HH:MM), e.g. 02:00")
	segments := fs.Int("segments", 1, fmt.Sprintf("parallel Scan segments, 1 to %d", maxSegments))
	asJSON := fs.Bool("json", false, `print {"query": {...}, "scan": {...}} with count, scanned_count, consumed_rcu, pages, elapsed_ms`)
	df := addDynamoFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if *date == "" {
		return usagef("--batch-date is required, e.g. --batch-date 2026-05-13")
	}
	if err := checkDate(*date); err != nil {
		return err
	}
	if err := checkWindow(*window); err != nil {
		return err
	}
	if *segments < 1 || *segments > maxSegments {
		return usagef("--segments %d: want 1 to %d parallel Scan segments", *segments, maxSegments)
	}
	c, err := df.open(ctx)
	if err != nil {
		return err
	}
	qn, q, err := c.QueryNight(ctx, *date, *window)
	if err != nil {
		return err
	}
	sn, s, err := c.ScanNight(ctx, *date, *window, *segments)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(qn.Jobs, sn.Jobs) {
		return fmt.Errorf("night %s: Query returned %d jobs and Scan %d; the table changed while reading, run again", *date, len(qn.Jobs), len(sn.Jobs))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(accessResult{Query: q, Scan: s})
	}
	what := "all windows"
	if *window != "" {
		what = "window " + *window
	}
	fmt.Fprintf(stdout, "night %s, %s, %s\n\n", *date, what, describeTarget(c))
	scanName := "Scan + filter"
	if *segments > 1 {
		scanName = fmt.Sprintf("Scan + filter (%d segments)", *segments)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\tQuery\t%s\t\n", scanName)
	fmt.Fprintf(tw, "items returned\t%d\t%d\t\n", q.Count, s.Count)
	fmt.Fprintf(tw, "items scanned\t%d\t%d\t\n", q.ScannedCount, s.ScannedCount)
	fmt.Fprintf(tw, "read capacity (RCU)\t%.1f\t%.1f\t\n", q.ConsumedRCU, s.ConsumedRCU)
	fmt.Fprintf(tw, "pages\t%d\t%d\t\n", q.Pages, s.Pages)
	fmt.Fprintf(tw, "elapsed (ms)\t%.1f\t%.1f\t\n", ms(q), ms(s))
	if err := tw.Flush(); err != nil {
		return err
	}
	if q.Count == 0 {
		fmt.Fprintf(stdout, "\nno jobs for %s in %s; seed it with `go run ./queuekit/cmd/queuekit seed --sample`\n", *date, c.Table())
		return nil
	}
	if q.ConsumedRCU > 0 {
		fmt.Fprintf(stdout, "\nScan read %d items to return %d and cost %.0fx the capacity of Query.\n",
			s.ScannedCount, s.Count, s.ConsumedRCU/q.ConsumedRCU)
	}
	return nil
}

func ms(r catalog.AccessReport) float64 { return float64(r.Elapsed.Microseconds()) / 1000 }

package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nightqueue/workshop/queuekit"
)

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("status")
	date := fs.String("batch-date", "", "the night (YYYY-MM-DD) (required)")
	asJSON := fs.Bool("json", false, `print {"batch_date", "state", "jobs", "ended", "statuses", "retries", "claims_won", "claims_lost", "dead_letters"}`)
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
	ex, err := openExecutor(ctx, df)
	if err != nil {
		return err
	}
	st, err := ex.Status(ctx, *date)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, st)
	}
	if st.State == "" {
		fmt.Fprintf(stdout, "night %s has not been run in %s: `queuekit run --batch-date %s --workers 3`\n", *date, ex.Table(), *date)
		return nil
	}
	fmt.Fprintf(stdout, "night %s: %s, %d of %d jobs ended, %d retries, %d lost attempts, claims won %d, lost %d\n",
		*date, st.State, st.Ended, st.Jobs, st.Retries, st.LostAttempts, st.ClaimsWon, st.ClaimsLost)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "execution_status\tjobs")
	for _, s := range queuekit.Status("").Values() {
		fmt.Fprintf(tw, "%s\t%d\n", s, st.Statuses[s])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range st.DeadLetters {
		fmt.Fprintf(stdout, "dead letter %s after %d attempts: %s\n", d.JobID, d.Attempts, d.LastError)
	}
	return nil
}

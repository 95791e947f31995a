package main

import (
	"context"
	"flag"
	"math"
	"os"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/lease"
)

// minuteFlag is --minute-ms (and --real-time): the wall time of one
// job-minute on the night's clock.
type minuteFlag struct {
	ms       float64
	realTime bool
}

func addMinuteFlag(fs *flag.FlagSet, def float64) *minuteFlag {
	m := &minuteFlag{}
	fs.Float64Var(&m.ms, "minute-ms", def, "milliseconds of wall time per job-minute of the night's clock")
	fs.BoolVar(&m.realTime, "real-time", false, "run the night in real time (one job-minute = one minute)")
	return m
}

// duration checks the flag and returns the job-minute; 0 when not given and
// the default is 0 (worker: take the run's).
func (m *minuteFlag) duration() (time.Duration, error) {
	if m.realTime {
		return time.Minute, nil
	}
	if !(m.ms >= 0) || math.IsInf(m.ms, 0) || m.ms > 3_600_000 {
		return 0, usagef("--minute-ms %v: must be a number of milliseconds > 0 (50 runs the stable night in about 8 s; 60000 is real time)", m.ms)
	}
	return time.Duration(m.ms * float64(time.Millisecond)), nil
}

// failFlag is --fail-job ID[,ID...]: jobs whose work always fails.
type failFlag []string

func (f *failFlag) String() string { return strings.Join(*f, ",") }
func (f *failFlag) Set(s string) error {
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			*f = append(*f, id)
		}
	}
	return nil
}

// openExecutor opens the catalog the flags name and the executor on its
// companion table; a bad table name is bad input, a failure to load the AWS
// configuration a runtime failure.
func openExecutor(ctx context.Context, df *dynamoFlags) (*lease.Executor, error) {
	cat, err := df.open(ctx)
	if err != nil {
		return nil, err
	}
	var opts []lease.Option
	// Test only: a process whose clock is off on purpose (see lease.EnvClockOffset).
	if v := os.Getenv(lease.EnvClockOffset); v != "" {
		off, err := time.ParseDuration(v)
		if err != nil {
			return nil, usagef("%s=%q: not a duration; write it as e.g. -4s or 1500ms (a test-only clock offset), or unset it", lease.EnvClockOffset, v)
		}
		opts = append(opts, lease.WithClockOffset(off))
	}
	ex, err := lease.New(cat, opts...)
	if err != nil {
		return nil, badInput(err)
	}
	return ex, nil
}

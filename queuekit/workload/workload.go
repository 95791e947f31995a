// Package workload generates synthetic batch nights for the job catalog:
// deterministic for a seed, with the sample nights' mix of requested windows,
// workload classes, priorities, exclusive-lock jobs and runtimes.
//
// Each night draws its number of jobs uniformly from the sample nights' range
// (8 to 12 jobs), then each job by resampling one sample job (its window,
// class, priority, exclusive lock and runtime) and varying its runtime by up
// to ±20 % in whole minutes. A "heavy" night has twice the jobs and runtimes
// 1.5 times as long, the overloaded nights a capacity planner worries about.
// Every job passes queuekit's Job.Validate.
//
// The random source is a PCG seeded with Config.Seed, never the global one:
// the same Config gives the same jobs on every machine. The package imports
// no AWS code; the catalog package seeds what it generates.
package workload

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit"
)

// DefaultStart is the first night when Config.Start is empty: one year of
// nights from it ends the day before the first sample night (2026-05-11), so
// generated nights and sample nights never share a key.
const DefaultStart = "2025-05-11"

// DefaultNights is one year of nights, the table size of the Query versus Scan study.
const DefaultNights = 365

// MaxNights is the most nights one Config generates (about 27 years, at
// most 240,000 jobs): Nights refuses more before drawing any.
const MaxNights = 10_000

// Sizes of a night, from the sample nights (8 to 12 jobs).
const (
	MinJobs = 8
	MaxJobs = 12
)

// Config describes a synthetic workload. The zero value plus a Seed gives one
// year of ordinary nights from DefaultStart.
type Config struct {
	Start       string          // first batch date, YYYY-MM-DD (default DefaultStart)
	Nights      int             // consecutive nights (default DefaultNights)
	Seed        uint64          // seed of the PCG random source
	HeavyNights int             // how many nights, chosen at random, are heavy
	PadBytes    int             // size of the optional "padding" attribute written by WriteJSONLines
	Window      queuekit.Window // batch window (default queuekit.DefaultWindow)
}

func (c Config) withDefaults() Config {
	c.Start = cmp.Or(c.Start, DefaultStart)
	c.Nights = cmp.Or(c.Nights, DefaultNights)
	if c.Window == (queuekit.Window{}) {
		c.Window = queuekit.DefaultWindow
	}
	return c
}

// Generate returns the jobs of cfg.Nights consecutive nights, night by night,
// each night in sort key order (window, then job id).
func Generate(cfg Config) ([]queuekit.Job, error) {
	nights, err := Nights(cfg)
	if err != nil {
		return nil, err
	}
	var jobs []queuekit.Job
	for _, n := range nights {
		jobs = append(jobs, n.Jobs...)
	}
	return jobs, nil
}

// Nights returns cfg.Nights consecutive validated nights.
func Nights(cfg Config) ([]queuekit.Night, error) {
	cfg = cfg.withDefaults()
	start, err := queuekit.ParseBatchDate(cfg.Start)
	if err != nil {
		return nil, fmt.Errorf("workload start: %w", err)
	}
	if cfg.Nights < 0 || cfg.Nights > MaxNights || cfg.HeavyNights < 0 || cfg.HeavyNights > cfg.Nights {
		return nil, fmt.Errorf("workload: nights = %d, heavy nights = %d: want 0 <= heavy <= nights <= %d", cfg.Nights, cfg.HeavyNights, MaxNights)
	}
	if cfg.PadBytes < 0 {
		return nil, fmt.Errorf("workload: pad bytes = %d: want 0 or more", cfg.PadBytes)
	}
	pool, err := templates(cfg.Window)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	heavy := map[int]bool{}
	for _, i := range rng.Perm(cfg.Nights)[:cfg.HeavyNights] {
		heavy[i] = true
	}
	nights := make([]queuekit.Night, 0, cfg.Nights)
	for i := range cfg.Nights {
		date := start.AddDate(0, 0, i).Format(time.DateOnly)
		n, err := night(rng, pool, date, heavy[i], cfg.Window)
		if err != nil {
			return nil, err
		}
		nights = append(nights, n)
	}
	return nights, nil
}

// templates are the sample jobs whose window lies inside w.
func templates(w queuekit.Window) ([]queuekit.Job, error) {
	sample, err := queuekit.SampleJobs()
	if err != nil {
		return nil, fmt.Errorf("workload: sample nights: %w", err)
	}
	var pool []queuekit.Job
	for _, j := range sample {
		if j.Validate(w) == nil {
			pool = append(pool, j)
		}
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("workload: no sample job requests a window inside %s; use a window that contains 01:00 to 03:00", w)
	}
	return pool, nil
}

func night(rng *rand.Rand, pool []queuekit.Job, date string, heavy bool, w queuekit.Window) (queuekit.Night, error) {
	n := MinJobs + rng.IntN(MaxJobs-MinJobs+1)
	if heavy {
		n *= 2
	}
	picks := make([]queuekit.Job, n)
	for k := range picks {
		t := pool[rng.IntN(len(pool))]
		rt := float64(t.RuntimeMinutes) * (0.8 + 0.4*rng.Float64())
		if heavy {
			rt *= 1.5
		}
		t.RuntimeMinutes = max(1, int(rt+0.5))
		picks[k] = t
	}
	// Sequence numbers follow the windows, as in the sample nights.
	sort.SliceStable(picks, func(a, b int) bool { return picks[a].RequestedWindow < picks[b].RequestedWindow })
	compact := strings.ReplaceAll(date, "-", "")
	for k := range picks {
		seq := k + 1
		j := &picks[k]
		j.BatchDate = date
		j.JobID = fmt.Sprintf("JOB-%s-%03d", compact, seq)
		j.WindowJobID = queuekit.SortKey(j.RequestedWindow, j.JobID)
		hour, _ := queuekit.ParseClock(j.RequestedWindow)
		j.SubmittedAt = fmt.Sprintf("%sT%02d:%02d:00Z", date, max(hour/60-1, 0), (seq*7)%60)
		j.Status = "queued"
	}
	nt, err := queuekit.NewNight(date, w, picks)
	if err != nil {
		return queuekit.Night{}, fmt.Errorf("workload: generated an invalid night: %w", err)
	}
	return nt, nil
}

// WriteJSONLines writes jobs as JSON Lines in the catalog's attribute names,
// the format queuekit.ReadJobs reads. padBytes > 0 adds a "padding" string
// attribute of that many bytes to every line (readers ignore it).
func WriteJSONLines(w io.Writer, jobs []queuekit.Job, padBytes int) error {
	bw := bufio.NewWriter(w)
	pad := strings.Repeat("x", max(padBytes, 0))
	for i, j := range jobs {
		b, err := json.Marshal(j)
		if err != nil {
			return fmt.Errorf("write job %d (%s): %w", i+1, j.JobID, err)
		}
		if padBytes > 0 {
			b = append(b[:len(b)-1], `,"padding":"`+pad+`"}`...)
		}
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write job %d (%s): %w", i+1, j.JobID, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write jobs: %w", err)
	}
	return nil
}

// Arrivals returns each night's arrival minutes after its window opens
// (queuekit.Job.ArrivalMinute), night by night: the input of
// capacity.ObservedPeaks and capacity.BinRates.
func Arrivals(nights []queuekit.Night) [][]float64 {
	out := make([][]float64, len(nights))
	for i, n := range nights {
		out[i] = make([]float64, len(n.Jobs))
		for k, j := range n.Jobs {
			out[i][k] = float64(j.ArrivalMinute(n.Window))
		}
	}
	return out
}

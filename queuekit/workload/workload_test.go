package workload_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/workload"
)

func TestGenerateIsDeterministicForASeed(t *testing.T) {
	a, err := workload.Generate(workload.Config{Nights: 30, Seed: 7, HeavyNights: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := workload.Generate(workload.Config{Nights: 30, Seed: 7, HeavyNights: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same config gave different jobs")
	}
	c, err := workload.Generate(workload.Config{Nights: 30, Seed: 8, HeavyNights: 3})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a, c) {
		t.Fatal("seeds 7 and 8 gave the same jobs")
	}
}

func TestDefaultIsOneYearEndingBeforeTheSampleNights(t *testing.T) {
	nights, err := workload.Nights(workload.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(nights) != 365 {
		t.Fatalf("got %d nights, want 365", len(nights))
	}
	if first, last := nights[0].BatchDate, nights[364].BatchDate; first != "2025-05-11" || last != "2026-05-10" {
		t.Fatalf("nights run %s to %s, want 2025-05-11 to 2026-05-10", first, last)
	}
}

func TestGeneratedNightsHaveTheSampleMixAndValidate(t *testing.T) {
	nights, err := workload.Nights(workload.Config{Seed: 42})
	if err != nil {
		t.Fatal(err)
	}
	windows, classes := map[string]int{}, map[string]int{}
	exclusive, total := 0, 0
	for _, n := range nights {
		if len(n.Jobs) < workload.MinJobs || len(n.Jobs) > workload.MaxJobs {
			t.Fatalf("night %s has %d jobs, want %d to %d", n.BatchDate, len(n.Jobs), workload.MinJobs, workload.MaxJobs)
		}
		for i, j := range n.Jobs {
			if err := j.Validate(queuekit.DefaultWindow); err != nil {
				t.Fatalf("night %s job %d: %v", n.BatchDate, i+1, err)
			}
			if want := fmt.Sprintf("JOB-%s-%03d", strings.ReplaceAll(n.BatchDate, "-", ""), i+1); j.JobID != want {
				t.Fatalf("job id %s, want %s", j.JobID, want)
			}
			if i > 0 && n.Jobs[i-1].WindowJobID >= j.WindowJobID {
				t.Fatalf("night %s not in sort key order at job %d", n.BatchDate, i+1)
			}
			windows[j.RequestedWindow]++
			classes[j.WorkloadClass]++
			if j.RequiresExclusiveLock {
				exclusive++
			}
			total++
		}
	}
	for _, w := range []string{"01:00", "02:00", "03:00"} {
		if windows[w] == 0 {
			t.Errorf("no job requests window %s", w)
		}
	}
	for _, c := range queuekit.WorkloadClasses {
		if classes[c] == 0 {
			t.Errorf("no job of class %s", c)
		}
	}
	// The sample nights have 10 exclusive jobs in 39: the mix should keep
	// exclusive jobs a minority but common.
	if frac := float64(exclusive) / float64(total); frac < 0.15 || frac > 0.40 {
		t.Errorf("exclusive fraction %.2f, want near the sample's 10/39 = 0.26", frac)
	}
}

func TestHeavyNightsHaveTwiceTheJobs(t *testing.T) {
	nights, err := workload.Nights(workload.Config{Nights: 50, Seed: 3, HeavyNights: 5})
	if err != nil {
		t.Fatal(err)
	}
	heavy := 0
	for _, n := range nights {
		if len(n.Jobs) > workload.MaxJobs {
			heavy++
		}
	}
	if heavy != 5 {
		t.Fatalf("%d nights with more than %d jobs, want the 5 heavy ones", heavy, workload.MaxJobs)
	}
}

func TestWriteJSONLinesRoundTripsThroughTheLoader(t *testing.T) {
	jobs, err := workload.Generate(workload.Config{Nights: 5, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	for _, pad := range []int{0, 100} {
		var buf bytes.Buffer
		if err := workload.WriteJSONLines(&buf, jobs, pad); err != nil {
			t.Fatal(err)
		}
		if pad > 0 && !strings.Contains(buf.String(), `"padding":"`+strings.Repeat("x", pad)+`"}`) {
			t.Fatalf("pad %d: no padding attribute in %.200s", pad, buf.String())
		}
		back, err := queuekit.ReadJobs(&buf, "generated.jsonl", queuekit.DefaultWindow)
		if err != nil {
			t.Fatalf("pad %d: %v", pad, err)
		}
		if !reflect.DeepEqual(back, jobs) {
			t.Fatalf("pad %d: jobs changed in the round trip", pad)
		}
	}
}

func TestBadConfigIsAnError(t *testing.T) {
	for _, cfg := range []workload.Config{
		{Start: "2026-13-01"},
		{Nights: 3, HeavyNights: 4},
		{Nights: -1},
		{PadBytes: -1},
	} {
		if _, err := workload.Generate(cfg); err == nil {
			t.Errorf("%+v: no error", cfg)
		}
	}
}

func ExampleGenerate() {
	jobs, err := workload.Generate(workload.Config{Start: "2026-06-01", Nights: 2, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(jobs[0].BatchDate, jobs[0].JobID, jobs[len(jobs)-1].BatchDate)
	// Output: 2026-06-01 JOB-20260601-001 2026-06-02
}

package queuekit

import "testing"

// By hand from data/sample_nights.jsonl.
//
// 2026-05-13: runtimes sum to 270 min, the two exclusive jobs (50 + 35) to
// 85. With c = 3: worker-minutes 185 + 3×85 = 440 of 3×240 = 720, share
// 61.1 %, while ρ = 270/720 = 37.5 %; packed into 440/3 = 85 + 185/3 = 146.7 min.
//
// 2026-05-14: runtimes sum to 620 min (mean 51.67), the five exclusive jobs
// to 355 > 240: no c is enough. With c = 3: ρ = 620/720 = 86.1 %, share
// (265 + 3×355)/720 = 1330/720 = 184.7 %, packed into 1330/3 = 355 + 265/3 = 443.3 min.
func TestDemandCountsLocksAndPacksTheWork(t *testing.T) {
	for _, tt := range []struct {
		date                string
		c                   int
		workerMin, capacity float64
		rho, share, path    float64
		fits                bool
	}{
		{"2026-05-13", 3, 440, 720, 0.375, 440.0 / 720, 85 + 185.0/3, true},
		{"2026-05-14", 3, 1330, 720, 620.0 / 720, 1330.0 / 720, 355 + 265.0/3, false},
		{"2026-05-14", 100, 265 + 100*355, 24000, 620.0 / 24000, (265 + 35500.0) / 24000, 355 + 2.65, false},
	} {
		n, err := SampleNight(tt.date)
		if err != nil {
			t.Fatal(err)
		}
		d, err := n.Demand(tt.c)
		if err != nil {
			t.Fatal(err)
		}
		if d.WorkerMinutes != tt.workerMin || d.Capacity != tt.capacity || !near(d.Rho, tt.rho) || !near(d.Share, tt.share) ||
			!near(d.PackedMinutes, tt.path) || !near(d.PackedMinutes, d.WorkerMinutes/float64(tt.c)) || d.WorkFits() != tt.fits {
			t.Errorf("%s c=%d: %+v fits=%v; want worker-min %v of %v, ρ %.4f, share %.4f, packed %.2f, fits %v",
				tt.date, tt.c, d, d.WorkFits(), tt.workerMin, tt.capacity, tt.rho, tt.share, tt.path, tt.fits)
		}
		p, _ := n.Params(tt.c)
		if !near(p.Rho, d.Rho) {
			t.Errorf("%s c=%d: Demand ρ %v, Params ρ %v", tt.date, tt.c, d.Rho, p.Rho)
		}
	}
	if _, err := (Night{}).Demand(0); err == nil {
		t.Error("0 workers: no error")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

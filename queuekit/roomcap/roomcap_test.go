package roomcap

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s = %.6g, want %.6g (relative tolerance %g)", name, got, want, tol)
	}
}

// poisson returns n single-cell participants arriving at rate lambda with
// work drawn by size (wall = work: the cell needs a core all along).
func poisson(n int, lambda float64, size func(*rand.Rand) float64, seed uint64) []Participant {
	r := rand.New(rand.NewPCG(seed, 7))
	ps := make([]Participant, n)
	t := 0.0
	for i := range ps {
		t += r.ExpFloat64() / lambda
		s := size(r)
		ps[i] = Participant{Start: t, Cells: []Cell{{Wall: s, CPU: s}}}
	}
	return ps
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// M/M/2 with λ = 1, μ = 1, cap 1 core per cell: a = 1, ρ = 0.5. Erlang C by
// hand: P0 = 1/(1 + a + a²/2!·2/(2−a)) = 1/3, C = a²/2!·2/(2−a)·P0 = 1/3,
// W = 1/μ + C/(cμ − λ) = 1 + 1/3 = 4/3.
func TestOpenMM2MatchesErlangC(t *testing.T) {
	ps := poisson(200_000, 1, func(r *rand.Rand) float64 { return r.ExpFloat64() }, 1)
	res, err := Simulate(Config{Cores: 2, Cap: 1, Participants: ps})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "mean time in system", mean(res.All()[20_000:]), 4.0/3, 0.03)
}

// M/M/3 with λ = 2, μ = 1 (SPEC.md's textbook vector): C = 4/9, Wq = 4/9,
// W = 13/9.
func TestOpenMM3MatchesErlangC(t *testing.T) {
	ps := poisson(200_000, 2, func(r *rand.Rand) float64 { return r.ExpFloat64() }, 2)
	res, err := Simulate(Config{Cores: 3, Cap: 1, Participants: ps})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "mean time in system", mean(res.All()[20_000:]), 13.0/9, 0.03)
}

// M/D/1 under processor sharing: E[T] = E[S]/(1 − ρ) whatever the work's
// distribution; S = 1, λ = 0.5 gives 2 (FCFS would give 1.5).
func TestOpenMD1ProcessorSharingIsInsensitive(t *testing.T) {
	ps := poisson(200_000, 0.5, func(*rand.Rand) float64 { return 1 }, 3)
	res, err := Simulate(Config{Cores: 1, Participants: ps})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "mean time in system", mean(res.All()[20_000:]), 2, 0.03)
}

func TestClosedRoomByHand(t *testing.T) {
	cpuCell := []Cell{{Wall: 1, CPU: 1}}
	tests := []struct {
		name        string
		cells       []Cell
		n           int
		cores, capC float64
		think       float64
		want        []float64 // one participant's latencies (all are alike)
	}{
		// alone: the measured wall again, whatever the cores
		{"alone", []Cell{{Wall: 3, CPU: 1}, {Wall: 0.5, CPU: 0.5}}, 1, 2, 1, 0, []float64{3, 0.5}},
		// three 1-CPU-second cells on one core share it: all end at 3
		{"3 on 1 core", cpuCell, 3, 1, 1, 0, []float64{3}},
		// on two cores: 2/3 of a core each, all end at 1.5
		{"3 on 2 cores", cpuCell, 3, 2, 1, 0, []float64{1.5}},
		// two participants on four cores, capped at one each: no stretch
		{"cap", cpuCell, 2, 4, 1, 0, []float64{1}},
		// no cap, one participant on four cores: its CPU seconds were measured
		// at four cores, so alone it still takes its wall of 1 s
		{"no cap alone", []Cell{{Wall: 1, CPU: 4}}, 1, 4, 0, 0, []float64{1}},
		// cap 1 on half a core: 1 s of work takes 2 s, the 2 s without a core stay
		{"half a core", []Cell{{Wall: 3, CPU: 1}}, 1, 0.5, 1, 0, []float64{4}},
		// wall 5 with 1 CPU second: 4 s need no core (in parallel), then two
		// seconds of work on one core: both end at 6
		{"no-core part", []Cell{{Wall: 5, CPU: 1}}, 2, 1, 1, 0, []float64{6}},
		// think time between cells does not count in a latency, and spreads
		// nothing here: both think at once
		{"think", []Cell{{Wall: 1, CPU: 1}, {Wall: 1, CPU: 1}}, 2, 1, 1, 10, []float64{2, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Room(tt.cells, tt.n, tt.cores, tt.capC, tt.think)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range r.Latency {
				if len(l) != len(tt.want) {
					t.Fatalf("participant %d: %d latencies, want %d", i, len(l), len(tt.want))
				}
				for j := range l {
					near(t, "latency", l[j], tt.want[j], 1e-9)
				}
			}
		})
	}
}

// Staggered starts: A's 2 CPU seconds alone on one core for 1 s, then B
// arrives with 1 CPU second: they share, B ends at 1 + 2 = 3 (latency 2), A
// has 0 left then too (1 + 1·0.5 + ... ): A ends at 3 as well (latency 3).
func TestStaggeredSharing(t *testing.T) {
	r, err := Simulate(Config{Cores: 1, Cap: 1, Participants: []Participant{
		{Start: 0, Cells: []Cell{{Wall: 2, CPU: 2}}},
		{Start: 1, Cells: []Cell{{Wall: 1, CPU: 1}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "A", r.Latency[0][0], 3, 1e-9)
	near(t, "B", r.Latency[1][0], 2, 1e-9)
	near(t, "end", r.End, 3, 1e-9)
}

func TestCoresFor(t *testing.T) {
	// Ten participants, one cell of 1 CPU second each, cap 1: on c cores all
	// end at 10/c (for c <= 10). Limit 2 s: c = 5 is the fewest.
	c, p95, err := CoresFor([]Cell{{Wall: 1, CPU: 1}}, 10, 1, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c != 5 {
		t.Errorf("cores = %d, want 5", c)
	}
	near(t, "p95", p95, 2, 1e-9)
	// A cell that needs no core: one core is enough for any room.
	c, _, err = CoresFor([]Cell{{Wall: 3, CPU: 0}}, 30, 1, 0, 6)
	if err != nil || c != 1 {
		t.Errorf("cores = %d, %v; want 1", c, err)
	}
	// Alone, a 3 s cell misses a 2 s limit: no number of cores helps.
	_, _, err = CoresFor([]Cell{{Wall: 3, CPU: 3}}, 4, 1, 0, 2)
	if !errors.Is(err, ErrNoCores) {
		t.Errorf("err = %v, want ErrNoCores", err)
	}
}

func TestBadInput(t *testing.T) {
	for _, cfg := range []Config{
		{Cores: 0},
		{Cores: math.NaN()},
		{Cores: 1, Cap: -1},
		{Cores: 1, Participants: []Participant{{Cells: []Cell{{Wall: math.NaN()}}}}},
		{Cores: 1, Participants: []Participant{{Start: -1}}},
		{Cores: 1, Participants: []Participant{{Think: math.Inf(1)}}},
	} {
		if _, err := Simulate(cfg); err == nil {
			t.Errorf("Simulate(%+v): no error", cfg)
		}
	}
	if _, err := Room(nil, 0, 1, 1, 0); err == nil {
		t.Error("Room with 0 participants: no error")
	}
}

func TestOfferedLoadAndQuantile(t *testing.T) {
	cells := []Cell{{Wall: 4, CPU: 1}, {Wall: 4, CPU: 3}}
	// 6 participants · 4 CPU s / 8 s = 3 Erlangs; with 2 s think: 4/10 · 6 = 2.4
	near(t, "a", OfferedLoad(cells, 6, 0), 3, 1e-12)
	near(t, "a with think", OfferedLoad(cells, 6, 2), 2.4, 1e-12)
	// Empirical quantile: the smallest x with at least 95 % of values <= x.
	xs := make([]float64, 100)
	for i := range xs {
		xs[i] = float64(100 - i)
	}
	if q := Quantile(0.95, xs); q != 95 {
		t.Errorf("p95 of 1..100 = %v, want 95", q)
	}
	if xs[0] != 100 {
		t.Error("Quantile sorted its argument")
	}
}

// Measured alone on a host that left a quarter of a core free: 10 s of wall
// with 2 CPU seconds is 10 − 2/0.25 = 2 s without a core, so with a core free
// it takes 2 + 2 = 4 s; simulated back on 0.25 cores it takes its 10 s again.
func TestAlone(t *testing.T) {
	got, err := Alone([]Cell{{Wall: 10, CPU: 2}, {Wall: 1, CPU: 1}}, 0.25, 1)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "wall with a core free", got[0].Wall, 4, 1e-12)
	// 1 s of wall cannot hold 1 CPU second at a quarter core: no part without a core
	near(t, "a cell that was all work", got[1].Wall, 1, 1e-12)
	r, err := Room(got[:1], 1, 0.25, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "back on 0.25 cores", r.Latency[0][0], 10, 1e-9)
	same, _ := Alone([]Cell{{Wall: 10, CPU: 2}}, 2, 1)
	near(t, "host with cores to spare", same[0].Wall, 10, 1e-12)
	if _, err := Alone(nil, 0, 1); err == nil {
		t.Error("Alone with 0 solo cores: no error")
	}
}

// One participant measured alone on a 4-core host, container cap 1 core; the
// host's other work left 0.5 cores free on average over the step, and each
// cell's own free cores were measured (g below is min(cap, free)). By hand,
// no-core part = Wall − CPU/g, then alone with a core free: + CPU/1.
//
//	cell  wall  cpu  free       g     no-core        with a core free
//	A     10    2    0.25       0.25  10 − 8 = 2     2 + 2 = 4
//	B      3    2    1.5        1     3 − 2 = 1      1 + 2 = 3 (got more than the average)
//	C      5    1    0.5        0.5   5 − 2 = 3      3 + 1 = 4
//	D      2    1    0.25→0.5   0.5   2 − 2 = 0      0 + 1 = 1 (1 CPU s in 2 s: it had 0.5, not 0.25)
//	E      4    1    none→0.5   0.5   4 − 2 = 2      2 + 1 = 3 (the step's value)
//	F      0.5  0    0.25       0.25  0.5 − 0 = 0.5  0.5
//
// Replayed alone, each with its own g: no-core + CPU/g is the measured wall
// again, 10, 3, 5, 2, 4, 0.5. B replayed instead on the step's 0.5 cores (the
// old way) would take 1 + 2/0.5 = 5 s, not its measured 3 s.
func TestAloneAndSoloGiveBackTheMeasuredCells(t *testing.T) {
	measured := []Cell{
		{Notebook: "A", Wall: 10, CPU: 2, FreeCores: Cores(0.25)},
		{Notebook: "B", Wall: 3, CPU: 2, FreeCores: Cores(1.5)},
		{Notebook: "C", Wall: 5, CPU: 1, FreeCores: Cores(0.5)},
		{Notebook: "D", Wall: 2, CPU: 1, FreeCores: Cores(0.25)},
		{Notebook: "E", Wall: 4, CPU: 1},
		{Notebook: "F", Wall: 0.5, CPU: 0, FreeCores: Cores(0.25)},
	}
	quiet, err := Alone(measured, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantQuiet := []float64{4, 3, 4, 1, 3, 0.5}
	wantFree := []float64{0.25, 1.5, 0.5, 0.5, 0.5, 0.25}
	for i, c := range quiet {
		near(t, c.Notebook+" with a core free", c.Wall, wantQuiet[i], 1e-12)
		if c.FreeCores == nil {
			t.Fatalf("%s: no free cores after Alone", c.Notebook)
		}
		near(t, c.Notebook+" free cores used", *c.FreeCores, wantFree[i], 1e-12)
	}
	if measured[3].FreeCores == nil || *measured[3].FreeCores != 0.25 || measured[4].FreeCores != nil {
		t.Error("Alone changed its input's free cores")
	}
	r, err := Solo(quiet, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Latency) != 1 || len(r.Latency[0]) != len(measured) {
		t.Fatalf("latencies %v, want one participant's %d", r.Latency, len(measured))
	}
	for i, l := range r.Latency[0] {
		near(t, measured[i].Notebook+" replayed alone", l, measured[i].Wall, 1e-9)
	}
	near(t, "end", r.End, 10+3+5+2+4+0.5, 1e-9)
	old, err := Room(quiet[1:2], 1, 0.5, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "B on the step's average", old.Latency[0][0], 5, 1e-9)
}

func TestFreeCoresBadInput(t *testing.T) {
	cell := func(free *float64) []Cell {
		return []Cell{{Notebook: "00", Index: 3, Wall: 2, CPU: 1, FreeCores: free}}
	}
	for _, tt := range []struct {
		name      string
		cells     []Cell
		step, cap float64
		want      string
	}{
		{"zero free cores", cell(Cores(0)), 1, 1, "free cores 0"},
		{"negative free cores", cell(Cores(-1)), 1, 1, "free cores -1"},
		{"NaN free cores", cell(Cores(math.NaN())), 1, 1, "free cores NaN"},
		{"infinite free cores", cell(Cores(math.Inf(1))), 1, 1, "free cores +Inf"},
		{"no step value", cell(nil), 0, 1, "step's free cores 0"},
		{"negative step value", cell(Cores(1)), -2, 1, "step's free cores -2"},
		{"zero cap", cell(Cores(1)), 1, 0, "cap 0"},
		{"negative wall", []Cell{{Wall: -1, CPU: 1}}, 1, 1, "wall -1"},
		{"NaN cpu", []Cell{{Wall: 1, CPU: math.NaN()}}, 1, 1, "cpu NaN"},
	} {
		got, err := Alone(tt.cells, tt.step, tt.cap)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Alone, %s: %v, %v; want an error with %q", tt.name, got, err, tt.want)
		}
	}
	// Solo needs each cell's own free cores, one participant, and good ones.
	if _, err := Solo(cell(nil), 4, 1); err == nil || !strings.Contains(err.Error(), "no free cores of its own") {
		t.Errorf("Solo without free cores: %v", err)
	}
	if _, err := Solo(cell(Cores(0)), 4, 1); err == nil || !strings.Contains(err.Error(), "free cores 0") {
		t.Errorf("Solo with 0 free cores: %v", err)
	}
	two := []Participant{{Cells: cell(Cores(1))}, {Cells: cell(Cores(1))}}
	if _, err := Simulate(Config{Cores: 4, Cap: 1, CellCores: true, Participants: two}); err == nil || !strings.Contains(err.Error(), "2 participants") {
		t.Errorf("CellCores with two participants: %v", err)
	}
	// Cells with no wall and no CPU, or CPU in no wall: numbers, not NaN.
	q, err := Alone([]Cell{{Wall: 0, CPU: 0}, {Wall: 0, CPU: 1}, {Wall: 1, CPU: 0, FreeCores: Cores(1e-9)}}, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range q {
		if math.IsNaN(c.Wall) || math.IsInf(c.Wall, 0) || math.IsNaN(*c.FreeCores) {
			t.Errorf("cell %d: wall %v, free %v", i, c.Wall, *c.FreeCores)
		}
	}
	near(t, "no wall, no CPU", q[0].Wall, 0, 0)
	near(t, "CPU in no wall: all work", q[1].Wall, 1, 1e-12)
	near(t, "no CPU", q[2].Wall, 1, 1e-12)
	r, err := Solo(q, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range r.All() {
		if math.IsNaN(l) || math.IsInf(l, 0) {
			t.Errorf("latency %v", l)
		}
	}
}

// Two participants on one core, cap 1, each running a cell of 1 s with no
// CPU (it waits) and then a cell of 1 CPU second. By hand: the waiting cells
// overlap and take 1 s each (slowdown 1); the computing cells share the core
// and take 2 s each (slowdown 2). A cell of no wall time is left out.
func TestSlowdown(t *testing.T) {
	cells := []Cell{{Wall: 1, CPU: 0}, {Wall: 1, CPU: 1}, {Wall: 0, CPU: 0}}
	r, err := Room(cells, 2, 1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := Slowdown(cells, r)
	want := []float64{1, 2, 1, 2}
	if len(got) != len(want) {
		t.Fatalf("Slowdown = %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Errorf("Slowdown[%d] = %v, want %v", i, got[i], want[i])
		}
	}
}

// Thirty participants, each a cell of 10 s that waits (no CPU) and then a
// cell of 1 CPU second, cap 1, all at once. By hand: the waiting cells take
// 10 s whatever the cores; the computing cells share c cores and take 30/c s
// (c < 30). Half the cells are each kind, so the p95 latency is 30/c once
// that passes 10 s: a limit of 20 s needs 2 cores (p95 15 s). The slowdown
// of a computing cell is 30/c, so 95 % of the cells within 2x needs 15.
func TestCoresForSlowdown(t *testing.T) {
	cells := []Cell{{Wall: 10, CPU: 0}, {Wall: 1, CPU: 1}}
	c, p95, err := CoresFor(cells, 30, 1, 0, 20)
	if err != nil || c != 2 || math.Abs(p95-15) > 1e-9 {
		t.Errorf("CoresFor = %d, %v, %v; want 2 cores, p95 15 s", c, p95, err)
	}
	c, sd, err := CoresForSlowdown(cells, 30, 1, 0, 2)
	if err != nil || c != 15 || math.Abs(sd-2) > 1e-9 {
		t.Errorf("CoresForSlowdown = %d, %v, %v; want 15 cores, 2x", c, sd, err)
	}
	if _, _, err := CoresForSlowdown(cells, 30, 1, 0, 0.5); err == nil {
		t.Error("a slowdown limit below 1: want an error")
	}
}

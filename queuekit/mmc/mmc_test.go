package mmc

import (
	"errors"
	"fmt"
	"math"
	"testing"
)

func relClose(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol*math.Abs(want) {
		t.Errorf("%s = %.9g, want %.9g (relative tolerance %g)", name, got, want, tol)
	}
}

// The vectors are SPEC.md's textbook values. For c=3, λ=2, μ=1 they follow by
// hand: a=2, Σ_{k<3} aᵏ/k! = 1+2+2 = 5, a³/3!·3/(3−2) = 4/3·3 = 4, so
// P0 = 1/(5+4) = 1/9, C = 4/9, Wq = C/(cμ−λ) = 4/9, Lq = λWq = 8/9,
// p95 = ln(C/0.05)/1 = ln(80/9).
func TestSolveTextbookVectors(t *testing.T) {
	tests := []struct {
		q                Queue
		p0, c, wq, lq, w float64
		p95              float64
	}{
		{Queue{2, 1, 3}, 1.0 / 9, 4.0 / 9, 4.0 / 9, 8.0 / 9, 4.0/9 + 1, math.Log(80.0 / 9)},
		// a=0.5: P0 = 1/(1 + 0.5 + 0.125·2/1.5) = 0.6; p95 = ln(0.1/0.05)/(20−5).
		{Queue{5, 10, 2}, 0.6, 0.1, 0.1 / 15, 5 * 0.1 / 15, 0.1/15 + 0.1, math.Log(2) / 15},
		{Queue{9, 1, 10}, math.NaN(), 0.668732, 0.668732, 9 * 0.668732, 1.668732, math.Log(0.668732 / 0.05)},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("c=%d,lambda=%g,mu=%g", tt.q.C, tt.q.Lambda, tt.q.Mu), func(t *testing.T) {
			m, err := tt.q.Solve()
			if err != nil {
				t.Fatal(err)
			}
			if !math.IsNaN(tt.p0) {
				relClose(t, "P0", m.P0, tt.p0, 1e-6)
			}
			relClose(t, "C", m.PWait, tt.c, 1e-6)
			relClose(t, "Wq", m.Wq, tt.wq, 1e-6)
			relClose(t, "Lq", m.Lq, tt.lq, 1e-6)
			relClose(t, "W", m.W, tt.w, 1e-6)
			relClose(t, "L", m.L, tt.lq+tt.q.A(), 1e-6)
			if tt.p95 == 0 {
				if m.WaitP95 != 0 {
					t.Errorf("p95 = %v, want 0 (C < 0.05)", m.WaitP95)
				}
			} else {
				relClose(t, "p95", m.WaitP95, tt.p95, 1e-6)
			}
		})
	}
}

func TestSpecP95Vector(t *testing.T) {
	got, err := Queue{2, 1, 3}.WaitQuantile(0.95)
	if err != nil {
		t.Fatal(err)
	}
	relClose(t, "p95", got, 2.184802, 1e-6)
}

// The Erlang B recursion must agree with the factorial formula where the
// latter is still exact, and stay finite where factorials overflow.
func TestErlangCMatchesClosedFormAndStaysFiniteAtC1000(t *testing.T) {
	for _, c := range []int{1, 2, 5, 20, 60} {
		a := 0.8 * float64(c)
		sum, term := 0.0, 1.0
		for k := 0; k < c; k++ {
			sum += term
			term *= a / float64(k+1)
		}
		top := term * float64(c) / (float64(c) - a)
		got, err := ErlangC(c, a)
		if err != nil {
			t.Fatal(err)
		}
		relClose(t, fmt.Sprintf("C(%d)", c), got, top/(sum+top), 1e-9)
	}
	q := Queue{Lambda: 990, Mu: 1, C: 1000}
	m, err := q.Solve()
	if err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"P0": m.P0, "C": m.PWait, "Wq": m.Wq, "Lq": m.Lq, "p95": m.WaitP95} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			t.Errorf("c=1000: %s = %v, want a finite non-negative number", name, v)
		}
	}
	if m.PWait <= 0 || m.PWait >= 1 {
		t.Errorf("c=1000: C = %v, want in (0,1)", m.PWait)
	}
	// A light load on many servers: P0 = 1/Σ_{k<c} aᵏ/k! (the last term is
	// negligible) = e⁻ᵃ to double precision once c ≫ a, so a = 1 gives e⁻¹.
	for _, c := range []int{200, 1000} {
		light, err := Queue{Lambda: 1, Mu: 1, C: c}.Solve()
		if err != nil {
			t.Fatal(err)
		}
		relClose(t, fmt.Sprintf("P0(c=%d, a=1)", c), light.P0, math.Exp(-1), 1e-12)
	}
	// P0 against the direct sum where factorials are still exact.
	for _, c := range []int{1, 3, 10, 60} {
		a := 0.7 * float64(c)
		sum, term := 0.0, 1.0
		for k := 0; k < c; k++ {
			sum += term
			term *= a / float64(k+1)
		}
		want := 1 / (sum + term*float64(c)/(float64(c)-a))
		got, err := Queue{Lambda: a, Mu: 1, C: c}.Solve()
		if err != nil {
			t.Fatal(err)
		}
		relClose(t, fmt.Sprintf("P0(c=%d)", c), got.P0, want, 1e-9)
	}
	tiny, err := Queue{Lambda: 1e-300, Mu: 1, C: 2}.Solve()
	if err != nil {
		t.Fatal(err)
	}
	relClose(t, "P0(a=1e-300)", tiny.P0, 1, 1e-12)
	// M/M/1 has C = ρ exactly.
	c1, err := ErlangC(1, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	relClose(t, "C(1,0.7)", c1, 0.7, 1e-12)
}

// Erlang B and C against values derived by hand from the closed forms
// B(c,a) = (aᶜ/c!) / Σ_{k<=c} aᵏ/k! and C(c,a) = [aᶜ/c!·c/(c−a)] /
// [Σ_{k<c} aᵏ/k! + aᶜ/c!·c/(c−a)], and every argument outside their domain
// refused with an error (never a number outside [0, 1], never NaN).
func TestErlangBAndCAreProbabilitiesOrErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(int, float64) (float64, error)
		c    int
		a    float64
		want float64
	}{
		{"B", ErlangB, 0, 5, 1},        // no server: every arrival blocked
		{"B", ErlangB, 1, 1, 0.5},      // a/(1+a)
		{"B", ErlangB, 2, 1, 0.2},      // (1/2) / (1 + 1 + 1/2)
		{"B", ErlangB, 3, 0, 0},        // no load, no blocking
		{"B", ErlangB, 2, 4, 8.0 / 13}, // 8 / (1 + 4 + 8): B may use any a >= 0
		{"C", ErlangC, 2, 1, 1.0 / 3},  // 1 / (1 + 1 + 1)
		{"C", ErlangC, 3, 2, 4.0 / 9},  // 4 / (1 + 2 + 2 + 4)
		{"C", ErlangC, 1, 0.25, 0.25},  // M/M/1: C = ρ
		{"C", ErlangC, 4, 0, 0},        // no load, no wait
	} {
		got, err := tc.f(tc.c, tc.a)
		if err != nil {
			t.Errorf("%s(%d, %v): %v", tc.name, tc.c, tc.a, err)
			continue
		}
		relClose(t, fmt.Sprintf("%s(%d, %v)", tc.name, tc.c, tc.a), got+1, tc.want+1, 1e-12)
	}
	for _, tc := range []struct {
		name   string
		f      func(int, float64) (float64, error)
		c      int
		a      float64
		wantIs error
	}{
		{"C", ErlangC, 3, 5, ErrUnstable}, // a > c: no steady state (was 2.45)
		{"C", ErlangC, 3, 3, ErrUnstable}, // a = c: no steady state
		{"C", ErlangC, 0, 1, nil},         // no server (was NaN)
		{"C", ErlangC, -1, 1, nil},
		{"C", ErlangC, 2, math.NaN(), nil},
		{"C", ErlangC, MaxServers + 1, 1, nil},
		{"B", ErlangB, -1, 1, nil}, // was 1
		{"B", ErlangB, 2, -1, nil},
		{"B", ErlangB, 2, math.Inf(1), nil},
		{"B", ErlangB, 2, math.NaN(), nil},
	} {
		got, err := tc.f(tc.c, tc.a)
		if err == nil {
			t.Errorf("%s(%d, %v) = %v, want an error", tc.name, tc.c, tc.a, got)
			continue
		}
		if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
			t.Errorf("%s(%d, %v): %v, want it to wrap %v", tc.name, tc.c, tc.a, err, tc.wantIs)
		}
	}
}

func TestProbWaitExceedsIsTheTailOfTheQuantile(t *testing.T) {
	q := Queue{2, 1, 3}
	t95, _ := q.WaitQuantile(0.95)
	p, err := q.ProbWaitExceeds(t95)
	if err != nil {
		t.Fatal(err)
	}
	relClose(t, "P(Wq > p95)", p, 0.05, 1e-9)
	p0, _ := q.ProbWaitExceeds(0)
	relClose(t, "P(Wq > 0)", p0, 4.0/9, 1e-9)
}

func TestBadParametersGiveErrorsNotNaN(t *testing.T) {
	for _, q := range []Queue{
		{0, 1, 1}, {-1, 1, 1}, {1, 0, 1}, {1, 1, 0}, {math.NaN(), 1, 1}, {1, math.Inf(1), 1},
		{3, 1, 3}, {4, 1, 3},
	} {
		if _, err := q.Solve(); err == nil {
			t.Errorf("%+v: Solve gave no error", q)
		}
	}
	_, err := Queue{3, 1, 3}.Solve()
	if !errors.Is(err, ErrUnstable) {
		t.Errorf("rho = 1: error %v, want ErrUnstable", err)
	}
	if _, err := (Queue{2, 1, 3}).WaitQuantile(1); err == nil {
		t.Error("quantile 1 gave no error")
	}
	if _, err := (Queue{2, 1, 3}).ProbWaitExceeds(-1); err == nil {
		t.Error("negative t gave no error")
	}
	if _, err := (Queue{2, 1, 3}).AllenCunneenWq(math.NaN(), 1); err == nil {
		t.Error("NaN ca gave no error")
	}
}

func TestApproximationsReduceToExactCases(t *testing.T) {
	q := Queue{2, 1, 3}
	m, _ := q.Solve()
	// Exponential arrivals and service (ca = cs = 1) give back M/M/c.
	ac, err := q.AllenCunneenWq(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	relClose(t, "Allen-Cunneen(1,1)", ac, m.Wq, 1e-12)
	// For c = 1 Cosmetatos' correction vanishes and M/D/1 is exactly half of M/M/1
	// (Pollaczek-Khinchine).
	q1 := Queue{0.8, 1, 1}
	m1, _ := q1.Solve()
	cd, _ := q1.CosmetatosWq()
	relClose(t, "Cosmetatos M/D/1", cd, m1.Wq/2, 1e-12)
}

func ExampleQueue_Solve() {
	// Three workers, two jobs an hour, each taking an hour on average.
	m, err := Queue{Lambda: 2, Mu: 1, C: 3}.Solve()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("P(wait) = %.6f, Wq = %.6f h, Lq = %.6f, p95 wait = %.6f h\n", m.PWait, m.Wq, m.Lq, m.WaitP95)
	// Output: P(wait) = 0.444444, Wq = 0.444444 h, Lq = 0.888889, p95 wait = 2.184802 h
}

// At fleet scale the solver stays finite and consistent: a million servers
// at ρ = 0.999 (a = 999,000, β = 1,000/√999,000 = 1.0005) give the
// Halfin-Whitt wait probability [1 + β Φ(β)/φ(β)]⁻¹ ≈ 0.2171 to within 1 %,
// and one server more than MaxServers is refused with a message.
func TestLargePoolStableAtMillionServers(t *testing.T) {
	q := Queue{Lambda: 999000, Mu: 1, C: 1000000}
	m, err := q.Solve()
	if err != nil {
		t.Fatal(err)
	}
	beta := 1000 / math.Sqrt(999000)
	phi := math.Exp(-beta*beta/2) / math.Sqrt(2*math.Pi)
	Phi := 0.5 * math.Erfc(-beta/math.Sqrt2)
	want := 1 / (1 + beta*Phi/phi)
	if math.Abs(m.PWait-want) > 0.01*want || math.IsNaN(m.P0) || m.P0 < 0 {
		t.Errorf("C = %v (Halfin-Whitt %v), P0 = %v", m.PWait, want, m.P0)
	}
	if _, err := (Queue{Lambda: 1, Mu: 1, C: MaxServers + 1}).Solve(); err == nil {
		t.Errorf("c = MaxServers + 1: want an error")
	}
}

// Package mmc is the analytic M/M/c queue: Poisson arrivals at rate Lambda,
// exponential service at rate Mu per server, C identical servers, first come
// first served, unlimited waiting room. It is the textbook reference the
// workshop's simulations are checked against, and the first-principles
// estimate of how long jobs wait.
//
// With offered load a = λ/μ and utilisation ρ = a/c < 1, the probability that
// an arrival has to wait is Erlang C:
//
//	C(c,a) = [aᶜ/c! · c/(c−a)] / [Σ_{k<c} aᵏ/k! + aᶜ/c! · c/(c−a)]
//
// computed stably for large c through the Erlang B recursion
//
//	B₀ = 1,  B_k = a·B_{k−1} / (k + a·B_{k−1}),  C = c·B_c / (c − a(1 − B_c)).
//
// Then Wq = C/(cμ − λ), Lq = λ·Wq, W = Wq + 1/μ, L = Lq + a,
// P(Wq > t) = C·exp(−(cμ − λ)t), and the q-quantile of the wait is
// max(0, ln(C/(1−q)) / (cμ − λ)). Times are in the unit of 1/λ and 1/μ
// (hours when the rates are per hour).
//
// For service that is not exponential the package offers two labelled
// approximations: Allen-Cunneen for G/G/c and Cosmetatos for M/D/c.
package mmc

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/floats"
)

// Queue is an M/M/c queue.
type Queue struct {
	Lambda float64 // arrival rate
	Mu     float64 // service rate of one server
	C      int     // number of servers
}

// MaxServers is the largest c the model solves: the Erlang B recursion and
// the P0 sum take time and memory linear in c (2 M servers: about 16 MB and
// tens of milliseconds), enough for a fleet of 100 M five-minute jobs a day
// (about 350,000 slots).
const MaxServers = 2_000_000

// ErrUnstable reports ρ >= 1: the queue grows without bound and has no
// steady state, so no waiting time exists to report.
var ErrUnstable = errors.New("unstable queue: utilisation ρ >= 1, so the queue grows without bound; add servers or reduce the load")

// Validate checks the parameters: positive finite rates, c >= 1 and ρ < 1.
func (q Queue) Validate() error {
	switch {
	case !(q.Lambda > 0) || math.IsInf(q.Lambda, 0):
		return fmt.Errorf("lambda = %v: arrival rate must be a positive number", q.Lambda)
	case !(q.Mu > 0) || math.IsInf(q.Mu, 0):
		return fmt.Errorf("mu = %v: service rate must be a positive number", q.Mu)
	case q.C < 1:
		return fmt.Errorf("c = %d: need at least one server", q.C)
	case q.C > MaxServers:
		return fmt.Errorf("c = %d: more than %d servers is outside this model's range", q.C, MaxServers)
	}
	if rho := q.Rho(); rho >= 1 {
		return fmt.Errorf("λ = %.4g, μ = %.4g, c = %d give ρ = %.4f: %w", q.Lambda, q.Mu, q.C, rho, ErrUnstable)
	}
	return nil
}

// A is the offered load λ/μ in Erlangs.
func (q Queue) A() float64 { return q.Lambda / q.Mu }

// Rho is the utilisation λ/(cμ).
func (q Queue) Rho() float64 { return q.Lambda / (float64(q.C) * q.Mu) }

// ErlangB returns the Erlang B blocking probability B(c, a), a probability
// in [0, 1], by the stable recursion B_k = a·B_{k−1}/(k + a·B_{k−1}), for c
// servers (0 to MaxServers; B(0, a) = 1: with no server every arrival is
// blocked) and an offered load a >= 0 in Erlangs. Other arguments are an
// error, never a number.
func ErlangB(c int, a float64) (float64, error) {
	if err := checkLoad(c, 0, a); err != nil {
		return 0, fmt.Errorf("erlang B: %w", err)
	}
	return erlangB(c, a), nil
}

func erlangB(c int, a float64) float64 {
	b := 1.0
	for k := 1; k <= c; k++ {
		b = a * b / (float64(k) + a*b)
	}
	return b
}

// ErlangC returns the probability that an arrival waits, C(c, a), a
// probability in [0, 1], for c servers (1 to MaxServers) and an offered load
// 0 <= a < c. A load a >= c has no steady state: the error wraps
// ErrUnstable. Other arguments are an error, never a number.
func ErlangC(c int, a float64) (float64, error) {
	if err := checkLoad(c, 1, a); err != nil {
		return 0, fmt.Errorf("erlang C: %w", err)
	}
	if a >= float64(c) {
		return 0, fmt.Errorf("erlang C: a = %v Erlangs on c = %d servers: %w", a, c, ErrUnstable)
	}
	return erlangC(c, a), nil
}

func erlangC(c int, a float64) float64 {
	b := erlangB(c, a)
	return float64(c) * b / (float64(c) - a*(1-b))
}

// checkLoad checks c in [minC, MaxServers] and a finite a >= 0.
func checkLoad(c, minC int, a float64) error {
	switch {
	case c < minC || c > MaxServers:
		return fmt.Errorf("c = %d: want %d to %d servers", c, minC, MaxServers)
	case !(a >= 0) || math.IsInf(a, 0):
		return fmt.Errorf("a = %v: the offered load must be a finite number of Erlangs >= 0", a)
	}
	return nil
}

// Metrics are the steady-state measures of an M/M/c queue.
type Metrics struct {
	P0      float64 `json:"p0"`       // probability the system is empty
	PWait   float64 `json:"p_wait"`   // Erlang C: probability an arrival waits
	Wq      float64 `json:"wq"`       // mean wait in queue
	Lq      float64 `json:"lq"`       // mean number waiting
	W       float64 `json:"w"`        // mean time in system
	L       float64 `json:"l"`        // mean number in system
	WaitP95 float64 `json:"wait_p95"` // 95th percentile of the wait
}

// Solve returns the steady-state metrics, or an error for bad or unstable
// parameters (never NaN or Inf).
func (q Queue) Solve() (Metrics, error) {
	if err := q.Validate(); err != nil {
		return Metrics{}, err
	}
	a, c := q.A(), float64(q.C)
	pc := erlangC(q.C, a)
	wq := pc / (c*q.Mu - q.Lambda)
	m := Metrics{
		P0:    p0(q.C, a),
		PWait: pc,
		Wq:    wq,
		Lq:    q.Lambda * wq,
		W:     wq + 1/q.Mu,
	}
	m.L = m.Lq + a
	m.WaitP95, _ = q.WaitQuantile(0.95)
	return m, nil
}

// p0 is the empty-system probability
//
//	P0 = 1 / (Σ_{k<c} aᵏ/k! + aᶜ/c! · c/(c−a)),
//
// summed in logs (log-sum-exp over k·ln a − ln k!) so that neither large c
// nor a tiny load overflows or underflows: for c = 1000 and a = 1 it gives
// e⁻¹ as it should.
func p0(c int, a float64) float64 {
	terms := make([]float64, c+1)
	la := math.Log(a)
	for k := 0; k < c; k++ {
		lg, _ := math.Lgamma(float64(k + 1))
		terms[k] = float64(k)*la - lg
	}
	lg, _ := math.Lgamma(float64(c + 1))
	terms[c] = float64(c)*la - lg + math.Log(float64(c)/(float64(c)-a))
	return math.Exp(-floats.LogSumExp(terms))
}

// WaitQuantile returns the q-quantile of the waiting time in queue,
// max(0, ln(C/(1−q)) / (cμ − λ)), for 0 < q < 1.
func (q Queue) WaitQuantile(p float64) (float64, error) {
	if err := q.Validate(); err != nil {
		return 0, err
	}
	if !(p > 0 && p < 1) {
		return 0, fmt.Errorf("quantile %v: must be between 0 and 1 exclusive", p)
	}
	pc := erlangC(q.C, q.A())
	return math.Max(0, math.Log(pc/(1-p))/(float64(q.C)*q.Mu-q.Lambda)), nil
}

// ProbWaitExceeds returns P(Wq > t) = C·exp(−(cμ − λ)t) for t >= 0.
func (q Queue) ProbWaitExceeds(t float64) (float64, error) {
	if err := q.Validate(); err != nil {
		return 0, err
	}
	if !(t >= 0) || math.IsInf(t, 0) {
		return 0, fmt.Errorf("t = %v: must be a finite time >= 0", t)
	}
	return erlangC(q.C, q.A()) * math.Exp(-(float64(q.C)*q.Mu-q.Lambda)*t), nil
}

// AllenCunneenWq approximates the mean wait of a G/G/c queue with the same
// rates: Wq(G/G/c) ≈ Wq(M/M/c)·(ca² + cs²)/2, where ca and cs are the
// coefficients of variation of interarrival and service times.
// It is an approximation: label it so wherever it is shown.
func (q Queue) AllenCunneenWq(ca, cs float64) (float64, error) {
	if !(ca >= 0) || !(cs >= 0) || math.IsInf(ca, 0) || math.IsInf(cs, 0) {
		return 0, fmt.Errorf("coefficients of variation ca=%v cs=%v must be finite and >= 0", ca, cs)
	}
	m, err := q.Solve()
	if err != nil {
		return 0, err
	}
	return m.Wq * (ca*ca + cs*cs) / 2, nil
}

// CosmetatosWq approximates the mean wait of an M/D/c queue (constant
// service time 1/μ) by Cosmetatos' correction of half the M/M/c wait:
//
//	Wq(M/D/c) ≈ ½·Wq(M/M/c)·[1 + (1−ρ)(c−1)·(√(4+5c) − 2)/(16ρc)]
//
// It is an approximation: label it so wherever it is shown.
func (q Queue) CosmetatosWq() (float64, error) {
	m, err := q.Solve()
	if err != nil {
		return 0, err
	}
	c, rho := float64(q.C), q.Rho()
	corr := 1 + (1-rho)*(c-1)*(math.Sqrt(4+5*c)-2)/(16*rho*c)
	return 0.5 * m.Wq * corr, nil
}

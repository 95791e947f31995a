// Package forecast asks when machine learning helps to forecast a night, and
// answers with a measurement rather than an opinion.
//
// The setting: a night's jobs carry estimated runtimes, but each job really
// runs for estimate × bias(class) × ε, where ε is lognormal (median 1, σ of
// its log Truth.Sigma) and the bias per workload class is unknown to the
// planner (ETL runs long, refreshes short, ...). History is a year of nights
// from queuekit/workload, each run by queuekit/sim (barrier policy) with its
// real runtimes on 2, 3 or 4 workers: the realised drain minute (when the
// last job finishes) is what a planner wants to forecast.
//
// Three forecasters, all fitted on the older nights and judged on the newer
// ones and on the four sample nights (the overloaded 2026-05-14 on 2 workers
// among them), by the mean absolute error of the drain minute:
//
//  1. Regression: ordinary least squares (gonum mat.QR) of the realised drain
//     minute on features of the night: estimated work per worker, estimated
//     exclusive-lock minutes (they run alone), jobs per worker, and an
//     intercept. It learns outcomes from history, knowing nothing of the rules.
//  2. Simulator with the estimates: first principles, fed the estimated
//     runtimes as they are.
//  3. Simulator with fitted runtimes: first principles fed what history
//     teaches: for each class, the slope of actual on estimated runtime,
//     fitted through the origin with gonum stat.LinearRegression; each job's
//     forecast runtime is its estimate times its class's slope.
//
// The notebook reads the result: a regression of outcomes is a lossy copy of
// the simulator, and it extrapolates badly to a night unlike its history; the
// simulator fails only where its inputs are wrong, and learning the inputs
// (runtime per class) is where learning pays.
package forecast

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/sim"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// Truth is how runtimes really behave: actual = estimate × Bias[class] × ε,
// ln ε ~ Normal(0, Sigma). The forecasters never see it.
type Truth struct {
	Bias  map[string]float64
	Sigma float64
	// LoadExponent, when not 0, makes every runtime of a night grow with the
	// night's load: a job runs (W / LoadReference)^LoadExponent times as
	// long, W being the night's estimated minutes per worker (contention for
	// the database the jobs share). A per-class factor cannot express it:
	// it is a world the fitted simulator does not match.
	LoadExponent, LoadReference float64
}

// LoadTruth is DefaultTruth with runtimes that grow with the night's load:
// exponent 0.3 around 100 estimated minutes per worker, so a night with four
// times that load runs its jobs 4^0.3 ≈ 1.52 times as long, and a light
// night of 25 minutes per worker in 0.25^0.3 ≈ 0.66 of the time.
var LoadTruth = Truth{Bias: DefaultTruth.Bias, Sigma: DefaultTruth.Sigma, LoadExponent: 0.3, LoadReference: 100}

// loadFactor is the runtime multiplier of a night on c workers under t.
func (t Truth) loadFactor(n queuekit.Night, c int) float64 {
	if t.LoadExponent == 0 || !(t.LoadReference > 0) || c < 1 {
		return 1
	}
	w := float64(n.Summarize().TotalRuntimeMinutes) / float64(c)
	return math.Pow(w/t.LoadReference, t.LoadExponent)
}

// DefaultTruth is the runtime truth hidden from the planner in notebook 09:
// ETL 25 % longer than estimated, refreshes 10 % shorter, backfills 40 %
// longer, index maintenance 10 % longer; σ = 0.25.
var DefaultTruth = Truth{
	Bias: map[string]float64{
		queuekit.ClassETL: 1.25, queuekit.ClassRefresh: 0.9,
		queuekit.ClassBackfill: 1.4, queuekit.ClassIndexMaintenance: 1.1,
	},
	Sigma: 0.25,
}

// Record is one night as it really ran.
type Record struct {
	Night    queuekit.Night
	Workers  int
	Runtimes []float64 // actual runtime of each job, in Night.Jobs order
	Drain    float64   // realised drain minute
	P95Wait  float64   // realised p95 wait, minutes
}

// Realise runs a night with runtimes drawn from truth.
func Realise(n queuekit.Night, workers int, truth Truth, rng *rand.Rand) (Record, error) {
	eps := distuv.LogNormal{Mu: 0, Sigma: truth.Sigma, Src: rng}
	load := truth.loadFactor(n, workers)
	tasks := sim.Tasks(n)
	rts := make([]float64, len(tasks))
	for i := range tasks {
		b, ok := truth.Bias[tasks[i].Class]
		if !ok {
			return Record{}, fmt.Errorf("realise night %s: no runtime bias for class %q", n.BatchDate, tasks[i].Class)
		}
		rts[i] = math.Max(1, tasks[i].Estimate*b*load*eps.Rand())
		tasks[i].Runtime = rts[i]
	}
	res, err := run(tasks, n, workers)
	if err != nil {
		return Record{}, fmt.Errorf("realise night %s: %w", n.BatchDate, err)
	}
	return Record{Night: n, Workers: workers, Runtimes: rts, Drain: res.DrainedMinute, P95Wait: res.P95Wait}, nil
}

func run(tasks []sim.Task, n queuekit.Night, workers int) (sim.Result, error) {
	var e sim.Engine
	return e.Run(tasks, sim.Config{Workers: workers, Cutoff: float64(n.Window.Minutes()), NoTrace: true})
}

// HistoryConfig describes the simulated history.
type HistoryConfig struct {
	Nights  int    // default 365
	Heavy   int    // heavy nights among them (with Nights 0, default 36: a tenth of 365)
	Seed    uint64 // for the nights and the runtimes
	Workers []int  // worker counts, cycled night by night (default 2, 3, 4)
	Truth   Truth  // default DefaultTruth
}

// History generates and realises cfg.Nights nights, oldest first.
func History(cfg HistoryConfig) ([]Record, error) {
	if cfg.Nights == 0 {
		cfg.Nights = 365
		if cfg.Heavy == 0 {
			cfg.Heavy = cfg.Nights / 10
		}
	}
	if len(cfg.Workers) == 0 {
		cfg.Workers = []int{2, 3, 4}
	}
	if cfg.Truth.Bias == nil {
		cfg.Truth = DefaultTruth
	}
	nights, err := workload.Nights(workload.Config{Nights: cfg.Nights, HeavyNights: cfg.Heavy, Seed: cfg.Seed})
	if err != nil {
		return nil, fmt.Errorf("history: %w", err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xf0eca57))
	out := make([]Record, 0, len(nights))
	for i, n := range nights {
		r, err := Realise(n, cfg.Workers[i%len(cfg.Workers)], cfg.Truth, rng)
		if err != nil {
			return nil, fmt.Errorf("history: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// FeatureNames name the regression's features, in order.
var FeatureNames = []string{"intercept", "estimated minutes per worker", "estimated exclusive minutes", "jobs per worker"}

// Features are the regression's inputs for a night on c workers.
func Features(n queuekit.Night, c int) []float64 {
	s := n.Summarize()
	fc := float64(c)
	return []float64{1, float64(s.TotalRuntimeMinutes) / fc, float64(s.ExclusiveRuntimeMinutes), float64(s.Jobs) / fc}
}

// Regression is a fitted linear model of the drain minute.
type Regression struct {
	Coef []float64 // one per feature, FeatureNames order
}

// FitRegression fits the drain minute on Features by least squares (QR).
func FitRegression(train []Record) (Regression, error) {
	k := len(FeatureNames)
	if len(train) <= k {
		return Regression{}, fmt.Errorf("fit regression: %d nights, need more than %d", len(train), k)
	}
	x := mat.NewDense(len(train), k, nil)
	y := mat.NewDense(len(train), 1, nil)
	for i, r := range train {
		x.SetRow(i, Features(r.Night, r.Workers))
		y.Set(i, 0, r.Drain)
	}
	var qr mat.QR
	qr.Factorize(x)
	var beta mat.Dense
	if err := qr.SolveTo(&beta, false, y); err != nil {
		return Regression{}, fmt.Errorf("fit regression: %w", err)
	}
	return Regression{Coef: mat.Col(nil, 0, &beta)}, nil
}

// Predict forecasts the drain minute of a night on c workers.
func (r Regression) Predict(n queuekit.Night, c int) float64 {
	return floatsDot(r.Coef, Features(n, c))
}

func floatsDot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Runtimes is a fitted runtime model: actual ≈ Factor[class] × estimate.
type Runtimes struct {
	Factor map[string]float64
	Jobs   map[string]int // jobs of each class the fit saw
}

// FitRuntimes fits, for each class, the slope of actual on estimated runtime
// through the origin (gonum stat.LinearRegression with origin = true).
func FitRuntimes(train []Record) (Runtimes, error) {
	xs, ys := map[string][]float64{}, map[string][]float64{}
	for _, r := range train {
		for i, j := range r.Night.Jobs {
			xs[j.WorkloadClass] = append(xs[j.WorkloadClass], float64(j.RuntimeMinutes))
			ys[j.WorkloadClass] = append(ys[j.WorkloadClass], r.Runtimes[i])
		}
	}
	if len(xs) == 0 {
		return Runtimes{}, errors.New("fit runtimes: no jobs in the history")
	}
	m := Runtimes{Factor: map[string]float64{}, Jobs: map[string]int{}}
	for class, x := range xs {
		_, beta := stat.LinearRegression(x, ys[class], nil, true)
		m.Factor[class], m.Jobs[class] = beta, len(x)
	}
	return m, nil
}

// Simulate forecasts a night's drain minute on c workers: the scheduler plans
// with the estimates, and each job runs for its estimate times its class's
// factor (1 for a class the fit never saw). The zero Runtimes is the
// simulator fed the estimates as they are.
func (m Runtimes) Simulate(n queuekit.Night, c int) (float64, error) {
	tasks := sim.Tasks(n)
	for i := range tasks {
		if f, ok := m.Factor[tasks[i].Class]; ok {
			tasks[i].Runtime = tasks[i].Estimate * f
		}
	}
	res, err := run(tasks, n, c)
	if err != nil {
		return 0, fmt.Errorf("forecast night %s on %d workers: %w", n.BatchDate, c, err)
	}
	return res.DrainedMinute, nil
}

// Row is one held-out night: what happened and what each forecaster said.
type Row struct {
	BatchDate    string
	Workers      int
	Heavy        bool    // more jobs than any ordinary night
	Realised     float64 // drain minute
	Regression   float64
	SimEstimates float64
	SimFitted    float64
	Oracle       float64 // the noise floor's forecast (AddOracle); NaN until then

	night *queuekit.Night // the night, for AddOracle
}

// Evaluation is the forecasters judged on held-out nights.
type Evaluation struct {
	Rows    []Row
	Runtime Runtimes
	Model   Regression
	// Mean absolute errors of the drain minute over Rows, minutes.
	MAERegression, MAESimEstimates, MAESimFitted float64
	MAEOracle                                    float64 // NaN until AddOracle
}

// Evaluate fits on train and judges on test.
func Evaluate(train, test []Record) (Evaluation, error) {
	reg, err := FitRegression(train)
	if err != nil {
		return Evaluation{}, err
	}
	rts, err := FitRuntimes(train)
	if err != nil {
		return Evaluation{}, err
	}
	ev := Evaluation{Runtime: rts, Model: reg, MAEOracle: math.NaN()}
	for _, r := range test {
		est, err := Runtimes{}.Simulate(r.Night, r.Workers)
		if err != nil {
			return Evaluation{}, err
		}
		fit, err := rts.Simulate(r.Night, r.Workers)
		if err != nil {
			return Evaluation{}, err
		}
		row := Row{BatchDate: r.Night.BatchDate, Workers: r.Workers, Heavy: len(r.Night.Jobs) > workload.MaxJobs,
			Realised: r.Drain, Regression: reg.Predict(r.Night, r.Workers), SimEstimates: est, SimFitted: fit,
			Oracle: math.NaN(), night: &r.Night}
		ev.Rows = append(ev.Rows, row)
		ev.MAERegression += math.Abs(row.Regression - row.Realised)
		ev.MAESimEstimates += math.Abs(row.SimEstimates - row.Realised)
		ev.MAESimFitted += math.Abs(row.SimFitted - row.Realised)
	}
	if len(ev.Rows) == 0 {
		return Evaluation{}, errors.New("evaluate: no held-out nights")
	}
	n := float64(len(ev.Rows))
	ev.MAERegression /= n
	ev.MAESimEstimates /= n
	ev.MAESimFitted /= n
	return ev, nil
}

// SampleWorkers are the worker counts the sample nights run with: the
// reference scenarios (2026-05-13 on 3, 2026-05-14 on 2) and 3 for the others.
var SampleWorkers = map[string]int{"2026-05-11": 3, "2026-05-12": 3, "2026-05-13": 3, "2026-05-14": 2}

// SampleRecords realises each of the four sample nights draws times (one
// realisation is one draw of the runtime noise) with truth and seed.
func SampleRecords(truth Truth, seed uint64, draws int) ([]Record, error) {
	if draws < 1 {
		return nil, fmt.Errorf("sample records: %d draws: want at least 1", draws)
	}
	nights, err := queuekit.SampleNights()
	if err != nil {
		return nil, err
	}
	sort.Slice(nights, func(a, b int) bool { return nights[a].BatchDate < nights[b].BatchDate })
	rng := rand.New(rand.NewPCG(seed, 0x5a3b1e))
	var out []Record
	for _, n := range nights {
		for range draws {
			r, err := Realise(n, SampleWorkers[n.BatchDate], truth, rng)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// DateError is the forecasters' errors on one night over its realisations.
type DateError struct {
	BatchDate                                    string
	Workers                                      int
	Draws                                        int
	MeanRealised                                 float64 // mean realised drain minute
	Regression, SimEstimates, SimFitted          float64 // forecasts (the same for every draw)
	MAERegression, MAESimEstimates, MAESimFitted float64
}

// ByDate groups the rows by night, in date order.
func (e Evaluation) ByDate() []DateError {
	idx := map[string]int{}
	var out []DateError
	for _, r := range e.Rows {
		i, ok := idx[r.BatchDate]
		if !ok {
			i = len(out)
			idx[r.BatchDate] = i
			out = append(out, DateError{BatchDate: r.BatchDate, Workers: r.Workers, Regression: r.Regression,
				SimEstimates: r.SimEstimates, SimFitted: r.SimFitted})
		}
		d := &out[i]
		d.Draws++
		d.MeanRealised += r.Realised
		d.MAERegression += math.Abs(r.Regression - r.Realised)
		d.MAESimEstimates += math.Abs(r.SimEstimates - r.Realised)
		d.MAESimFitted += math.Abs(r.SimFitted - r.Realised)
	}
	for i := range out {
		n := float64(out[i].Draws)
		out[i].MeanRealised /= n
		out[i].MAERegression /= n
		out[i].MAESimEstimates /= n
		out[i].MAESimFitted /= n
	}
	sort.Slice(out, func(a, b int) bool { return out[a].BatchDate < out[b].BatchDate })
	return out
}

// Study is the notebook's whole experiment: a history of
// StudyConfig.History.Nights nights, the oldest TrainShare of them to fit,
// the rest held out, and the four sample nights held out as well.
type Study struct {
	Train, Test int        // nights fitted on and held out (generated)
	Generated   Evaluation // judged on the held-out generated nights
	Samples     Evaluation // judged on the four sample nights, SampleDraws realisations each
}

// SampleDraws is how many times RunStudy realises each sample night.
const SampleDraws = 200

// DefaultTrainShare is the share of the history fitted on when
// StudyConfig.TrainShare is 0.
const DefaultTrainShare = 0.8

// StudyConfig describes the experiment of RunStudy and Seeds.
type StudyConfig struct {
	History HistoryConfig // the simulated history
	// TrainShare is the fraction of the history, oldest first, fitted on;
	// the rest is held out. It must be in (0, 1); zero (no training at all
	// would mean no forecaster) means DefaultTrainShare.
	TrainShare float64
}

// trainShare returns the share to fit on, checked.
func (c StudyConfig) trainShare() (float64, error) {
	if c.TrainShare == 0 {
		return DefaultTrainShare, nil
	}
	if !(c.TrainShare > 0 && c.TrainShare < 1) {
		return 0, fmt.Errorf("train share %v: want a fraction in (0, 1)", c.TrainShare)
	}
	return c.TrainShare, nil
}

// RunStudy runs the experiment; each sample night is realised SampleDraws times.
func RunStudy(sc StudyConfig) (Study, error) {
	trainShare, err := sc.trainShare()
	if err != nil {
		return Study{}, fmt.Errorf("study: %w", err)
	}
	cfg := sc.History
	hist, err := History(cfg)
	if err != nil {
		return Study{}, err
	}
	cut := int(math.Round(trainShare * float64(len(hist))))
	train, test := hist[:cut], hist[cut:]
	gen, err := Evaluate(train, test)
	if err != nil {
		return Study{}, err
	}
	truth := cfg.Truth
	if truth.Bias == nil {
		truth = DefaultTruth
	}
	samples, err := SampleRecords(truth, cfg.Seed, SampleDraws)
	if err != nil {
		return Study{}, err
	}
	smp, err := Evaluate(train, samples)
	if err != nil {
		return Study{}, err
	}
	return Study{Train: len(train), Test: len(test), Generated: gen, Samples: smp}, nil
}

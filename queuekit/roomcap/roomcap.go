// Package roomcap sizes the workshop room with the workshop's own queueing
// model: the cells participants run are the jobs, the host's cores are the
// servers.
//
// A participant's container runs one cell at a time. Alone on a host with a
// core free for it, a cell takes Wall seconds and its container uses CPU
// seconds of processor time. The model splits it into a part that needs no
// core (Wall − CPU/Cap, Cap being the container's CPU limit) and CPU seconds
// of work. Cells measured on a busy host waited for a core too: Alone takes
// that wait out with the cores the host's other work left free during each
// cell (Cell.FreeCores, measured per cell), not with an average over many
// cells, so a cell that got more cores than the average is not replayed
// slower. Work is served by processor sharing, as the kernel's scheduler
// does: with k participants in their CPU part, each gets min(Cap, Cores/k)
// cores. Alone, a participant's cells replayed each with its own free cores
// (Solo) take exactly their measured Wall again; with others they stretch by
// the share of cores they get.
//
// Several participants at once (Room) share one number of cores, the cores
// the host's other work left free over the whole step, not each cell's own:
// a cell's free cores describe the host only at the time that cell ran as
// measured, and in a replay among others it runs at other times, beside
// other cells, so the host's value over the step is the one that still
// applies.
//
// With Poisson arrivals of single-cell participants, exponential work and
// Cap = 1 this is the M/M/c queue (the number of cells in the system is the
// same birth-death chain as under first come first served), so the mean time
// in system is Erlang C's 1/μ + C(c,a)/(cμ − λ); with one core and any work
// distribution it is M/G/1 processor sharing, E[T] = E[S]/(1 − ρ). The tests
// check the simulation against both. A room in session is closed instead: N
// participants each run the notebooks' cells in order, pressing Run again as
// soon as a cell ends (Think 0) or after a pause.
package roomcap

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/nightqueue/workshop/queuekit"
)

// Cell is one code cell as measured alone in a participant's container.
type Cell struct {
	Notebook string  `json:"notebook"`
	Index    int     `json:"index"`    // the cell's position in the notebook
	Wall     float64 `json:"wall"`     // seconds from execute_request sent to execute_reply
	CPU      float64 `json:"cpu"`      // CPU seconds the container used meanwhile
	MemPeak  int64   `json:"mem_peak"` // the container's peak memory meanwhile, bytes
	// FreeCores are the cores the host's other work (anything but the
	// participants' containers) left free while the cell ran, measured from
	// /proc/stat and the containers' cgroups; nil when not measured (a
	// capacity.json from before it was), > 0 when set.
	FreeCores *float64 `json:"free_cores,omitempty"`
}

// Cores returns a pointer to v, for Cell.FreeCores.
func Cores(v float64) *float64 { return &v }

// Participant is one participant's script: from Start (seconds), its Cells in
// order, Think seconds between the end of a cell and the next.
type Participant struct {
	Start float64
	Cells []Cell
	Think float64
}

// Config is one simulated room.
type Config struct {
	Cores        float64 // cores the participants share (> 0; may be fractional: what other work leaves)
	Cap          float64 // most cores one participant may use (its container's CPU limit); 0: no limit
	Participants []Participant
	// CellCores serves each cell's work with at most the cores measured free
	// during it (Cell.FreeCores, required), as well as at most Cores: one
	// participant's cells replayed at the times they were measured. Only with
	// one participant: cells of several at once run at other times than
	// measured, and share Cores.
	CellCores bool
}

// Result holds each participant's cell latencies, in seconds, in the order
// of its cells, and when the last cell ended.
type Result struct {
	Latency [][]float64
	End     float64
}

// All returns every latency of the run in one slice.
func (r Result) All() []float64 {
	var out []float64
	for _, l := range r.Latency {
		out = append(out, l...)
	}
	return out
}

// maxEvents bounds a run: every cell is at most four events (start, end of
// its no-core part, end of its work, end of its think time).
const maxEvents = 50_000_000

// Simulate runs the room to its end. Bad parameters are an error, never NaN.
// Each step starts the participants whose start has come, settles every
// phase that ended at this instant, shares the cores among the cells at
// work, and advances to the next phase end or start.
func Simulate(cfg Config) (Result, error) {
	if err := cfg.check(); err != nil {
		return Result{}, err
	}
	r := newRoom(cfg)
	for {
		r.arrive()
		r.settle()
		rate := r.rate()
		dt := r.untilNext(rate)
		if math.IsInf(dt, 1) {
			return r.res, nil
		}
		r.advance(dt, rate)
	}
}

// check refuses a room the model cannot run: cores, caps, starts, think
// times and cells that are not finite and positive (or >= 0), each cell's
// own free cores when CellCores replays one participant, and more events
// than maxEvents.
func (cfg Config) check() error {
	if !(cfg.Cores > 0) || math.IsInf(cfg.Cores, 0) {
		return fmt.Errorf("roomcap: cores = %v: want a positive number", cfg.Cores)
	}
	if !(cfg.Cap >= 0) || math.IsInf(cfg.Cap, 0) {
		return fmt.Errorf("roomcap: cap = %v: want a number of cores >= 0 (0: no limit)", cfg.Cap)
	}
	events := 0
	for i, p := range cfg.Participants {
		if !(p.Start >= 0) || !(p.Think >= 0) || math.IsInf(p.Start, 0) || math.IsInf(p.Think, 0) {
			return fmt.Errorf("roomcap: participant %d: start %v, think %v: want finite seconds >= 0", i, p.Start, p.Think)
		}
		for j, c := range p.Cells {
			if !(c.Wall >= 0) || !(c.CPU >= 0) || math.IsInf(c.Wall, 0) || math.IsInf(c.CPU, 0) {
				return fmt.Errorf("roomcap: participant %d, cell %d (%s #%d): wall %v, cpu %v: want finite seconds >= 0",
					i, j, c.Notebook, c.Index, c.Wall, c.CPU)
			}
		}
		events += 4 * len(p.Cells)
	}
	if cfg.CellCores {
		if len(cfg.Participants) != 1 {
			return fmt.Errorf("roomcap: %d participants with each cell's own free cores: that replays one participant alone; several share Cores", len(cfg.Participants))
		}
		for j, c := range cfg.Participants[0].Cells {
			if err := checkFree(c); err != nil {
				return fmt.Errorf("roomcap: cell %d: %w", j, err)
			}
			if c.FreeCores == nil {
				return fmt.Errorf("roomcap: cell %d (%s #%d): no free cores of its own to replay it with", j, c.Notebook, c.Index)
			}
		}
	}
	if events > maxEvents {
		return fmt.Errorf("roomcap: %d cells in all: more than this model runs (%d)", events/4, maxEvents/4)
	}
	return nil
}

// The phases of a participant's cell.
const (
	idle    = iota // no-core part of a cell
	working        // CPU part of a cell
	thinking
)

// eps is how close two instants are to count as one.
const eps = 1e-9

// seat is one participant in the room.
type seat struct {
	id    int // index in cfg.Participants
	phase int
	cell  int
	left  float64 // seconds (idle, thinking) or CPU seconds (working)
	began float64 // when the current cell was sent
}

// room is a run of Simulate: the participants started and not done
// (active), the next to start (order[next]), the clock t and the result.
type room struct {
	cfg Config
	// r1: what a participant gets alone on a host with cores to spare (its
	// cap); capCores: what it gets here.
	r1, capCores float64
	res          Result
	order        []int // participants by start time
	next         int
	active       []*seat
	t            float64
}

func newRoom(cfg Config) *room {
	r1 := cmp.Or(cfg.Cap, cfg.Cores)
	n := len(cfg.Participants)
	r := &room{cfg: cfg, r1: r1, capCores: math.Min(r1, cfg.Cores), res: Result{Latency: make([][]float64, n)}, order: make([]int, n)}
	for i := range r.order {
		r.order[i] = i
		r.res.Latency[i] = make([]float64, 0, len(cfg.Participants[i].Cells))
	}
	slices.SortStableFunc(r.order, func(a, b int) int {
		return cmp.Compare(cfg.Participants[a].Start, cfg.Participants[b].Start)
	})
	return r
}

// begin starts the current cell of s now; false when s has no cell left.
func (r *room) begin(s *seat) bool {
	cells := r.cfg.Participants[s.id].Cells
	if s.cell >= len(cells) {
		return false
	}
	c := cells[s.cell]
	s.began = r.t
	s.phase, s.left = idle, math.Max(0, c.Wall-c.CPU/r.r1)
	return true
}

// arrive starts the participants whose start has come.
func (r *room) arrive() {
	n := len(r.cfg.Participants)
	for r.next < n && r.cfg.Participants[r.order[r.next]].Start <= r.t+eps {
		s := &seat{id: r.order[r.next]}
		r.next++
		if r.begin(s) {
			r.active = append(r.active, s)
		}
	}
}

// settle ends every phase that ends now, and the zero-length ones that
// follow, recording each cell that ends; a participant with no cell left
// leaves the room.
func (r *room) settle() {
	for changed := true; changed; {
		changed = false
		kept := r.active[:0]
		for _, s := range r.active {
			live := true
			if s.left <= eps {
				changed = true
				live = r.endPhase(s)
			}
			if live {
				kept = append(kept, s)
			}
		}
		r.active = kept
	}
}

// endPhase moves s past the phase that just ended; false when s is done.
func (r *room) endPhase(s *seat) bool {
	p := &r.cfg.Participants[s.id]
	switch s.phase {
	case idle:
		s.phase, s.left = working, p.Cells[s.cell].CPU
	case working:
		r.res.Latency[s.id] = append(r.res.Latency[s.id], r.t-s.began)
		r.res.End = math.Max(r.res.End, r.t)
		s.cell++
		if s.cell < len(p.Cells) && p.Think > 0 {
			s.phase, s.left = thinking, p.Think
			return true
		}
		return r.begin(s)
	case thinking:
		return r.begin(s)
	}
	return true
}

// rate is the cores each working cell gets now: the cores shared among
// them, at most a participant's cap (and, with CellCores, at most the
// cores measured free during the one cell at work).
func (r *room) rate() float64 {
	k := 0
	for _, s := range r.active {
		if s.phase == working {
			k++
		}
	}
	rate := 0.0
	if k > 0 {
		rate = math.Min(r.capCores, r.cfg.Cores/float64(k))
	}
	if r.cfg.CellCores && k == 1 { // one participant, checked by check
		s := r.active[0]
		rate = math.Min(rate, *r.cfg.Participants[s.id].Cells[s.cell].FreeCores)
	}
	return rate
}

// untilNext is the time to the next phase end or start (+Inf: the room is
// done).
func (r *room) untilNext(rate float64) float64 {
	dt := math.Inf(1)
	if r.next < len(r.cfg.Participants) {
		dt = r.cfg.Participants[r.order[r.next]].Start - r.t
	}
	for _, s := range r.active {
		if s.phase == working {
			dt = math.Min(dt, s.left/rate)
		} else {
			dt = math.Min(dt, s.left)
		}
	}
	return dt
}

// advance moves the clock dt on, every cell at work doing rate·dt CPU
// seconds of its work.
func (r *room) advance(dt, rate float64) {
	r.t += dt
	for _, s := range r.active {
		if s.phase == working {
			s.left -= rate * dt
		} else {
			s.left -= dt
		}
	}
}

// Alone returns cells as they would run alone with a core free (the
// container's cap, capCores > 0) when they were measured alone on a busy host.
// A cell got g = min(capCores, its FreeCores) cores while it ran, so the part
// that needs no core is its measured Wall − CPU/g, and the work then runs at
// capCores. A cell without FreeCores of its own (nil) gets stepCores, the
// host's free cores over the whole step, instead. A cell whose CPU seconds
// show it got more than g cores (CPU/Wall > g: the host counters undercount
// over a short cell) is taken as having got CPU/Wall: all of it was work.
// Each returned cell carries in FreeCores the value used, so Solo replays it.
// With g >= capCores the cells come back unchanged. Bad numbers are an
// error, never NaN.
func Alone(cells []Cell, stepCores, capCores float64) ([]Cell, error) {
	if !(stepCores > 0) || !(capCores > 0) || math.IsInf(stepCores, 0) || math.IsInf(capCores, 0) {
		return nil, fmt.Errorf("roomcap: step's free cores %v, cap %v: want positive numbers", stepCores, capCores)
	}
	out := slices.Clone(cells)
	for i := range out {
		c := &out[i]
		if !(c.Wall >= 0) || !(c.CPU >= 0) || math.IsInf(c.Wall, 0) || math.IsInf(c.CPU, 0) {
			return nil, fmt.Errorf("roomcap: cell %d (%s #%d): wall %v, cpu %v: want finite seconds >= 0", i, c.Notebook, c.Index, c.Wall, c.CPU)
		}
		if err := checkFree(*c); err != nil {
			return nil, fmt.Errorf("roomcap: cell %d: %w", i, err)
		}
		free := stepCores
		if c.FreeCores != nil {
			free = *c.FreeCores
		}
		if c.Wall > 0 {
			free = math.Max(free, c.CPU/c.Wall)
		}
		got := math.Min(capCores, free)
		c.Wall = math.Max(0, c.Wall-c.CPU/got) + c.CPU/capCores
		c.FreeCores = Cores(free)
	}
	return out, nil
}

// checkFree: a cell's FreeCores, when set, is a finite number > 0.
func checkFree(c Cell) error {
	if c.FreeCores == nil {
		return nil
	}
	if v := *c.FreeCores; !(v > 0) || math.IsInf(v, 0) {
		return fmt.Errorf("%s #%d: free cores %v: want a positive number of cores (or none: the step's value)", c.Notebook, c.Index, v)
	}
	return nil
}

// Solo replays one participant's cells alone (from Alone, at capCores), each
// cell's work served with the cores measured free during it, at most cores
// (the host's): the measured cells come back.
func Solo(cells []Cell, cores, capCores float64) (Result, error) {
	return Simulate(Config{Cores: cores, Cap: capCores, CellCores: true, Participants: []Participant{{Cells: cells}}})
}

// Room simulates n participants who all start at time 0 and run the same
// cells, Think seconds apart: the room pressing Run together.
func Room(cells []Cell, n int, cores, capCores, think float64) (Result, error) {
	if n < 1 {
		return Result{}, fmt.Errorf("roomcap: %d participants: want at least 1", n)
	}
	ps := make([]Participant, n)
	for i := range ps {
		ps[i] = Participant{Cells: cells, Think: think}
	}
	return Simulate(Config{Cores: cores, Cap: capCores, Participants: ps})
}

// Slowdown returns, for every cell of r (a Room run of cells), its latency
// over its latency alone with a core free (its Wall: cells from Alone), so
// 2 is a cell that took twice as long as alone. Cells with no wall time are
// left out. A percentile of latencies over the whole room is set by its
// longest cells, which may mostly wait without a core; this is what each
// cell sees.
func Slowdown(cells []Cell, r Result) []float64 {
	var out []float64
	for _, lat := range r.Latency {
		for j, v := range lat {
			if j < len(cells) && cells[j].Wall > 0 {
				out = append(out, v/cells[j].Wall)
			}
		}
	}
	return out
}

// Quantile is the empirical q-quantile of xs, which it does not change:
// the smallest value with at least a fraction q of the values at or below
// it, the module's one nearest-rank rule (queuekit.Quantile, what gonum's
// stat.Quantile with Empirical gives); 0 for no values.
func Quantile(q float64, xs []float64) float64 {
	v, _ := queuekit.Quantile(xs, q) // no values: 0, a room with no latencies
	return v
}

// ErrNoCores reports that no number of cores meets the target: even a core
// for every participant leaves the p95 above it.
var ErrNoCores = errors.New("no number of cores meets the target")

// CoresFor returns the fewest whole cores for which n participants running
// cells together (Room with think) have a p95 cell latency of at most limit
// seconds, and that p95. Past n·Cap cores nobody waits, so the search stops
// there (with no Cap, at n·the busiest cell's demand).
func CoresFor(cells []Cell, n int, capCores, think, limit float64) (int, float64, error) {
	if !(limit > 0) {
		return 0, 0, fmt.Errorf("roomcap: limit %v: want seconds > 0", limit)
	}
	return coresFor(cells, n, capCores, think, limit, func(r Result) float64 { return Quantile(0.95, r.All()) })
}

// CoresForSlowdown returns the fewest whole cores for which n participants
// running cells together have a p95 Slowdown of at most limit (2: 95 % of
// the cells take at most twice as long as alone), and that p95.
func CoresForSlowdown(cells []Cell, n int, capCores, think, limit float64) (int, float64, error) {
	if !(limit >= 1) {
		return 0, 0, fmt.Errorf("roomcap: slowdown limit %v: want a ratio >= 1", limit)
	}
	return coresFor(cells, n, capCores, think, limit, func(r Result) float64 { return Quantile(0.95, Slowdown(cells, r)) })
}

// coresFor is the search behind CoresFor and CoresForSlowdown: the fewest
// cores whose run's metric is at most limit (the metric falls as cores grow).
func coresFor(cells []Cell, n int, capCores, think, limit float64, metric func(Result) float64) (int, float64, error) {
	top := n
	if capCores > 0 {
		top = int(math.Ceil(float64(n) * capCores))
	}
	at := func(c int) (float64, error) {
		r, err := Room(cells, n, float64(c), capCores, think)
		if err != nil {
			return 0, err
		}
		return metric(r), nil
	}
	best, err := at(top)
	if err != nil {
		return 0, 0, err
	}
	if best > limit {
		return 0, best, fmt.Errorf("roomcap: %d participants, %d cores: %.2f > %.2f: %w", n, top, best, limit, ErrNoCores)
	}
	lo, hi := 0, top // metric(lo) > limit (0 cores: never), metric(hi) <= limit
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		v, err := at(mid)
		if err != nil {
			return 0, 0, err
		}
		if v <= limit {
			hi, best = mid, v
		} else {
			lo = mid
		}
	}
	return hi, best, nil
}

// Demand sums cells: their wall and CPU seconds and the highest memory peak.
type Demand struct {
	Cells   int
	Wall    float64
	CPU     float64
	MemPeak int64
}

// Sum returns the demand of cells.
func Sum(cells []Cell) Demand {
	d := Demand{Cells: len(cells)}
	for _, c := range cells {
		d.Wall += c.Wall
		d.CPU += c.CPU
		d.MemPeak = max(d.MemPeak, c.MemPeak)
	}
	return d
}

// OfferedLoad is the cores n participants keep busy on average when nobody
// waits, in Erlangs: n · CPU / (Wall + think between cells).
func OfferedLoad(cells []Cell, n int, think float64) float64 {
	d := Sum(cells)
	span := d.Wall + think*float64(max(0, d.Cells-1))
	if span <= 0 {
		return 0
	}
	return float64(n) * d.CPU / span
}

// Command roomcap turns what tests/room/capacity.py measured in the real room
// into the capacity table of docs/room.md (make room-capacity runs both):
// one participant's demand per notebook and per session, the N-participant
// steps with the model's p95 cell latency beside the measured one, and the
// host a room of 30 and of 60 needs for a p95 cell latency of at most twice
// one participant's alone.
//
// The model (queuekit/roomcap) is fed the demand measured in the same run, and
// the cores it serves each step with are the host's minus those its other
// work used (measured from /proc/stat and the participants' cgroups), so
// background load weighs on both sides of the check alike: one participant's
// cells are taken out of the background and, at N = 1, replayed with the free
// cores measured during each cell (free_cores in the JSON); the steps of
// N >= 2 are served with the step's free cores. A capacity.json from before
// cells carried free_cores falls back to the step's value, and says so.
//
// Usage:
//
//	roomcap -in tests/artifacts/room/capacity.json [-docs docs/room.md] [-tolerance 0.35] [-rooms 30,60] [-think 0]
//
// Exit status: 0, 1 when the model misses a step by more than the tolerance
// or the docs cannot be written, 2 for bad flags or an unreadable input.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nightqueue/workshop/queuekit/mmc"
	"github.com/nightqueue/workshop/queuekit/roomcap"
)

type participant struct {
	Name         string         `json:"name"`
	SpawnSeconds float64        `json:"spawn_seconds"`
	SpawnCPU     float64        `json:"spawn_cpu"`
	SpawnMemPeak int64          `json:"spawn_mem_peak"`
	MemPeak      int64          `json:"mem_peak"`
	CellCounts   map[string]int `json:"cell_counts"`
	Errors       []string       `json:"errors"`
	Cells        []roomcap.Cell `json:"cells"`
}

type step struct {
	N               int               `json:"n"`
	Kind            string            `json:"kind"`
	Sweep           int               `json:"sweep"` // which ROOM_CAPACITY_SWEEP group, for kind "sweep" (0 in a run with one)
	Notebooks       []string          `json:"notebooks"`
	LoadStart       []float64         `json:"load_start"`
	LoadEnd         []float64         `json:"load_end"`
	Seconds         float64           `json:"seconds"`
	Cores           int               `json:"cores"`
	BackgroundCores float64           `json:"background_cores"`
	SpawnFailed     map[string]string `json:"spawn_failed"`
	Participants    []participant     `json:"participants"`
}

type measurement struct {
	Cores    int     `json:"cores"`
	MemTotal int64   `json:"mem_total"`
	CPULimit float64 `json:"cpu_limit"`
	MemLimit string  `json:"mem_limit"`
	Started  float64 `json:"started"` // Unix seconds; 0 in a capacity.json from before they were written
	Ended    float64 `json:"ended"`
	Steps    []step  `json:"steps"`
}

const (
	beginMark = "<!-- room-capacity:begin (make room-capacity writes this part) -->"
	endMark   = "<!-- room-capacity:end -->"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("roomcap", flag.ContinueOnError)
	fs.SetOutput(stderr)
	in := fs.String("in", "tests/artifacts/room/capacity.json", "what tests/room/capacity.py measured")
	docs := fs.String("docs", "", "write the table into this Markdown file between its room-capacity marks")
	tol := fs.Float64("tolerance", 0.35, "largest relative gap between the model's p95 cell latency and the measured one")
	rooms := fs.String("rooms", "30,60", "room sizes to size a host for")
	think := fs.Float64("think", 0, "seconds a participant pauses between cells in the sized rooms (0: everyone presses Run again at once)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "roomcap: "+format+"\n", a...)
		return code
	}
	if !(*tol > 0) || !(*think >= 0) || math.IsInf(*think, 0) {
		return fail(2, "-tolerance %v, -think %v: want a tolerance > 0 and seconds >= 0", *tol, *think)
	}
	var sizes []int
	for _, f := range strings.Split(*rooms, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1000 {
			return fail(2, "-rooms %q: %q is not a room size from 1 to 1000", *rooms, f)
		}
		sizes = append(sizes, n)
	}
	raw, err := os.ReadFile(*in)
	if err != nil {
		return fail(2, "%v: run make room-capacity first (it writes %s)", err, *in)
	}
	var m measurement
	if err := json.Unmarshal(raw, &m); err != nil {
		return fail(2, "%s: %v", *in, err)
	}
	if len(m.Steps) == 0 || m.Steps[0].N != 1 || len(m.Steps[0].Participants) != 1 {
		return fail(2, "%s: the first step must be one participant alone (N = 1)", *in)
	}
	var out bytes.Buffer
	ok, err := report(&out, m, *tol, sizes, *think)
	if err != nil {
		return fail(1, "%v", err)
	}
	stdout.Write(out.Bytes())
	if *docs != "" {
		if err := writeDocs(*docs, out.String()); err != nil {
			return fail(1, "%v", err)
		}
		fmt.Fprintf(stderr, "roomcap: wrote the table into %s\n", *docs)
	}
	if !ok {
		return fail(1, "the model missed at least one step by more than %.0f %% (table above)", *tol*100)
	}
	return 0
}

func session(nb string) string {
	if nb < "05" {
		return "one"
	}
	return "two"
}

func gb(b int64) string { return fmt.Sprintf("%.2f GB", float64(b)/1e9) }

func loads(l []float64) string {
	if len(l) < 3 {
		return "?"
	}
	return fmt.Sprintf("%.1f/%.1f/%.1f", l[0], l[1], l[2])
}

// report writes the capacity table in the order docs/room.md shows it; ok is
// false when the model misses a step by more than tol.
func report(w io.Writer, m measurement, tol float64, sizes []int, think float64) (bool, error) {
	capCores := m.CPULimit
	if !(capCores > 0) {
		return false, fmt.Errorf("cpu_limit %v: the model needs the containers' CPU limit", capCores)
	}
	var soloSteps []step
	for _, s := range m.Steps {
		if s.N == 1 {
			soloSteps = append(soloSteps, s)
		}
	}
	writeHost(w, m)
	d, err := writeNotebookDemand(w, soloSteps, capCores)
	if err != nil {
		return false, err
	}
	writeSessionDemand(w, d, soloSteps)
	writeFitNotes(w, d.fit, capCores)
	ok, errs, err := writeModelCheck(w, m, tol, capCores)
	if err != nil {
		return false, err
	}
	writeFailures(w, append(d.errs, errs...))
	if err := writeHostSizing(w, d.quiet, soloSteps, sizes, capCores, think); err != nil {
		return false, err
	}
	writeEveryCell(w, soloSteps)
	return ok, nil
}

// demand is one participant's cells alone, per session.
type demand struct {
	solo  map[string][]roomcap.Cell // session -> cells measured alone
	quiet map[string][]roomcap.Cell // the same with a core free (roomcap.Alone)
	fit   aloneFit
	errs  []string // "N=1 participant: error"
}

// aloneFit counts how the cells measured alone fit their free cores
// (roomcap.Alone), for the notes under the demand tables.
type aloneFit struct{ stepValue, raised, overCap int }

// count adds the cells measured alone, beside what roomcap.Alone made of them.
func (f *aloneFit) count(measured, alone []roomcap.Cell, capCores float64) {
	for i, c := range measured {
		switch {
		case c.FreeCores == nil:
			f.stepValue++
		case *alone[i].FreeCores > *c.FreeCores:
			f.raised++
		}
		if c.Wall > 0 && c.CPU/c.Wall > capCores*(1+1e-9) {
			f.overCap++
		}
	}
}

// writeHost writes the opening sentence: the host, the containers' limits
// and the load during the run.
func writeHost(w io.Writer, m measurement) {
	fmt.Fprintf(w, "Measured by `make room-capacity` on a host with %d cores and %s of memory, participants' containers limited to %g CPU and %s",
		m.Cores, gb(m.MemTotal), m.CPULimit, m.MemLimit)
	lo, hi := math.Inf(1), 0.0
	for _, s := range m.Steps {
		for _, l := range [][]float64{s.LoadStart, s.LoadEnd} {
			if len(l) > 0 {
				lo, hi = math.Min(lo, l[0]), math.Max(hi, l[0])
			}
		}
	}
	fmt.Fprintf(w, "; load average (1 min) %.1f to %.1f during the run", lo, hi)
	if m.Started > 0 && m.Ended > m.Started {
		fmt.Fprintf(w, ", which took %.0f minutes (image builds included)", (m.Ended-m.Started)/60)
	}
	fmt.Fprintf(w, ".\n\n")
}

// writeNotebookDemand writes one participant's demand per notebook and
// gathers the cells alone per session for the tables after it.
func writeNotebookDemand(w io.Writer, soloSteps []step, capCores float64) (demand, error) {
	fmt.Fprintf(w, "**One participant alone** (a new server, then every code cell in order, a new kernel per notebook):\n\n")
	fmt.Fprintf(w, "| notebook | cells | wall | CPU | peak memory | slowest cell: wall / CPU |\n|---|---:|---:|---:|---:|---:|\n")
	d := demand{solo: map[string][]roomcap.Cell{}, quiet: map[string][]roomcap.Cell{}}
	for _, s := range soloSteps {
		p := s.Participants[0]
		if s.Kind != "sweep" { // a sweep step's errors are listed by the model check
			for _, e := range p.Errors {
				d.errs = append(d.errs, fmt.Sprintf("N=1 %s: %s", p.Name, e))
			}
		}
		byNb := map[string][]roomcap.Cell{}
		for _, c := range p.Cells {
			byNb[c.Notebook] = append(byNb[c.Notebook], c)
		}
		alone, err := roomcap.Alone(p.Cells, freeCores(s), capCores)
		if err != nil {
			return demand{}, err
		}
		d.fit.count(p.Cells, alone, capCores)
		for _, c := range alone {
			d.quiet[session(c.Notebook)] = append(d.quiet[session(c.Notebook)], c)
		}
		for _, nb := range s.Notebooks {
			cells := byNb[nb]
			d.solo[session(nb)] = append(d.solo[session(nb)], cells...)
			writeNotebookRow(w, nb, cells, p.CellCounts[nb])
		}
	}
	return d, nil
}

// writeNotebookRow writes one notebook's cells; want is how many it has, so a
// notebook that stopped early shows "ran of want".
func writeNotebookRow(w io.Writer, nb string, cells []roomcap.Cell, want int) {
	d := roomcap.Sum(cells)
	slow := roomcap.Cell{}
	for _, c := range cells {
		if c.Wall > slow.Wall {
			slow = c
		}
	}
	if d.Cells == 0 {
		// Not measured (the run's time bound, or the notebook stopped at its
		// first cell): a row of zeros would read as a free notebook.
		count := "not measured"
		if want > 0 {
			count = fmt.Sprintf("not measured (0 of %d)", want)
		}
		fmt.Fprintf(w, "| %s | %s | | | | |\n", nb, count)
		return
	}
	count := fmt.Sprint(d.Cells)
	if want != d.Cells {
		count = fmt.Sprintf("%d of %d", d.Cells, want)
	}
	fmt.Fprintf(w, "| %s | %s | %.1f s | %.1f s | %s | #%d: %.1f s / %.1f s |\n", nb, count, d.Wall, d.CPU, gb(d.MemPeak), slow.Index, slow.Wall, slow.CPU)
}

// writeSessionDemand writes one participant's demand per session, with the
// spawn and the first cell after it (the kernel's start) apart.
func writeSessionDemand(w io.Writer, d demand, soloSteps []step) {
	fmt.Fprintf(w, "\n| session | cells | wall | CPU | container's peak memory | spawn: wall / CPU | first cell after spawn: wall / CPU | p95 cell latency | p95 with a core free (model) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sess := range []string{"one", "two"} {
		cells := d.solo[sess]
		if len(cells) == 0 {
			fmt.Fprintf(w, "| %s | not measured in this run | | | | | | | |\n", sess)
			continue
		}
		sum := roomcap.Sum(cells)
		spawn, first := "", ""
		for _, p := range soloIn(soloSteps, sess) {
			spawn += fmt.Sprintf("%.0f s / %.0f s ", p.SpawnSeconds, p.SpawnCPU)
			first += fmt.Sprintf("%.1f s / %.1f s (%s) ", p.Cells[0].Wall, p.Cells[0].CPU, p.Cells[0].Notebook[:2])
		}
		fmt.Fprintf(w, "| %s | %d | %.0f s | %.0f s | %s | %s| %s| %.1f s | %.1f s |\n", sess, sum.Cells, sum.Wall, sum.CPU, gb(sessionPeak(soloSteps, sess)), spawn, first,
			roomcap.Quantile(0.95, walls(cells)), roomcap.Quantile(0.95, walls(d.quiet[sess])))
	}
}

// soloIn are the participants alone whose cells began in session sess.
func soloIn(soloSteps []step, sess string) []participant {
	var out []participant
	for _, s := range soloSteps {
		p := s.Participants[0]
		if len(p.Cells) > 0 && session(p.Cells[0].Notebook) == sess {
			out = append(out, p)
		}
	}
	return out
}

// sessionPeak is one container's peak memory over session sess.
func sessionPeak(soloSteps []step, sess string) int64 {
	var peak int64
	for _, p := range soloIn(soloSteps, sess) {
		peak = max(peak, p.MemPeak)
	}
	return peak
}

// writeFitNotes says where the model's replay of the cells alone departs
// from what was measured, so a reader can tell the model's guesses apart.
func writeFitNotes(w io.Writer, fit aloneFit, capCores float64) {
	if fit.stepValue > 0 {
		fmt.Fprintf(w, "\n%s measured alone carry no free cores of their own (free_cores: a capacity.json from before tests/room/capacity.py measured them per cell): "+
			"the model took their step's free cores for them, so a cell that got more than that average is replayed slower, and the N = 1 row below is served with the step's free cores.\n", cellCount(fit.stepValue))
	}
	if fit.raised > 0 {
		fmt.Fprintf(w, "\n%s measured alone used more CPU than their measured free cores allow in their wall time (the host's counters are coarse over a short cell): taken as having had CPU/wall cores.\n", cellCount(fit.raised))
	}
	if fit.overCap > 0 {
		fmt.Fprintf(w, "\n%s measured alone used more than the containers' %g CPU over their wall time (a burst within one CFS period): replayed at the cap, they take longer than measured.\n", cellCount(fit.overCap), capCores)
	}
}

// baseline is what the model replays at every step of a sweep: the sweep's
// first step's participant (N = 1), its cells and spawn with a core free.
type baseline struct {
	cells, spawn   []roomcap.Cell
	perCell        bool    // every cell carries its own free cores
	freeLo, freeHi float64 // their range, when perCell
}

func newBaseline(first step, capCores float64) (baseline, error) {
	base := first.Participants[0]
	cells, err := roomcap.Alone(base.Cells, freeCores(first), capCores)
	if err != nil {
		return baseline{}, err
	}
	b := baseline{cells: cells, perCell: len(base.Cells) > 0, freeLo: math.Inf(1)}
	for _, c := range base.Cells {
		if c.FreeCores == nil {
			b.perCell = false
			break
		}
		b.freeLo, b.freeHi = math.Min(b.freeLo, *c.FreeCores), math.Max(b.freeHi, *c.FreeCores)
	}
	b.spawn, err = roomcap.Alone([]roomcap.Cell{{Wall: base.SpawnSeconds, CPU: base.SpawnCPU}}, freeCores(first), capCores)
	if err != nil {
		return baseline{}, err
	}
	return b, nil
}

// sweeps groups the sweep steps by their group (step.Sweep), in the order
// the run took them (tests/room/capacity.py runs N = 1, 2, 4, 6 over each
// ROOM_CAPACITY_SWEEP group in turn). A group whose first step is not one
// participant alone has no baseline: an error.
func sweeps(m measurement) ([][]step, error) {
	var out [][]step
	at := map[int]int{}
	for _, s := range m.Steps {
		if s.Kind != "sweep" {
			continue
		}
		i, seen := at[s.Sweep]
		if !seen {
			if s.N != 1 || len(s.Participants) != 1 {
				return nil, fmt.Errorf("the sweep over %s starts with N = %d and %d participants: its first step must be one participant alone (N = 1)",
					strings.Join(s.Notebooks, " "), s.N, len(s.Participants))
			}
			i = len(out)
			at[s.Sweep] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], s)
	}
	return out, nil
}

// writeModelCheck writes, for every sweep, the model's p95 cell latency
// beside the measured one at each N; ok is false when a step misses by more
// than tol. errs are the cells and servers that failed in the sweeps.
func writeModelCheck(w io.Writer, m measurement, tol, capCores float64) (ok bool, errs []string, err error) {
	groups, err := sweeps(m)
	if err != nil {
		return false, nil, err
	}
	ok = true
	for _, g := range groups {
		base, err := newBaseline(g[0], capCores)
		if err != nil {
			return false, nil, err
		}
		fmt.Fprintf(w, "\n**N participants at once, session %s** (servers started together through the hub's REST API, then every participant runs %s through its kernel API; "+
			"model: `queuekit/roomcap` fed the N = 1 cells of this run, on the cores the host's other work left free during the step; at N = 1, during each cell):\n\n",
			sessionsOf(g[0].Notebooks), strings.Join(g[0].Notebooks, ", "))
		fmt.Fprintf(w, "| N | spawn (slowest) measured / model | cell latency p50 | p95 measured | p95 model | model / measured | memory (sum of peaks) | cores left by other work | load average |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for si, s := range g {
			errs = append(errs, stepErrors(s)...)
			if len(s.Participants) == 0 { // no server started
				continue
			}
			within, err := writeStepCheck(w, s, base, si == 0 && base.perCell, tol, capCores)
			if err != nil {
				return false, nil, err
			}
			ok = ok && within
		}
	}
	return ok, errs, nil
}

// sessionsOf names the sessions notebooks belong to: "one", "two" or "one and two".
func sessionsOf(notebooks []string) string {
	var out []string
	for _, nb := range notebooks {
		if s := session(nb); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " and ")
}

// stepErrors are the cells that failed and the servers that did not start in
// step s.
func stepErrors(s step) []string {
	var errs []string
	for _, p := range s.Participants {
		for _, e := range p.Errors {
			errs = append(errs, fmt.Sprintf("N=%d %s: %s", s.N, p.Name, e))
		}
	}
	for nm, e := range s.SpawnFailed {
		errs = append(errs, fmt.Sprintf("N=%d %s: server did not start %s", s.N, nm, e))
	}
	return errs
}

// writeStepCheck writes step s's row. With perCell (N = 1, the baseline's
// own step) the model replays each cell with the free cores it had, not the
// step's average.
func writeStepCheck(w io.Writer, s step, base baseline, perCell bool, tol, capCores float64) (bool, error) {
	var lat []float64
	var mem int64
	spawnMax := 0.0
	for _, p := range s.Participants {
		lat = append(lat, walls(p.Cells)...)
		mem += p.MemPeak
		spawnMax = math.Max(spawnMax, p.SpawnSeconds)
	}
	n := len(s.Participants) // the servers that started
	ceff := freeCores(s)
	coresCol := fmt.Sprintf("%.2f of %d", ceff, s.Cores)
	var r roomcap.Result
	var err error
	if perCell {
		r, err = roomcap.Solo(base.cells, float64(s.Cores), capCores)
		coresCol = fmt.Sprintf("per cell %.2f-%.2f (step %.2f) of %d", base.freeLo, base.freeHi, ceff, s.Cores)
	} else {
		r, err = roomcap.Room(base.cells, n, ceff, capCores, 0)
	}
	if err != nil {
		return false, err
	}
	rs, err := roomcap.Room(base.spawn, n, ceff, capCores, 0)
	if err != nil {
		return false, err
	}
	meas, pred := roomcap.Quantile(0.95, lat), roomcap.Quantile(0.95, r.All())
	ratio := pred / meas
	mark, within := "within", true
	if math.Abs(ratio-1) > tol {
		mark, within = "**outside**", false
	}
	fmt.Fprintf(w, "| %d | %.0f s / %.0f s | %.1f s | %.1f s | %.1f s | %.2f (%s ±%.0f %%) | %s | %s | %s → %s |\n",
		n, spawnMax, rs.End, roomcap.Quantile(0.5, lat), meas, pred, ratio, mark, tol*100, gb(mem), coresCol, loads(s.LoadStart), loads(s.LoadEnd))
	return within, nil
}

// writeFailures lists the cells and servers that failed, if any.
func writeFailures(w io.Writer, errs []string) {
	if len(errs) == 0 {
		return
	}
	sort.Strings(errs)
	fmt.Fprintf(w, "\nCells that failed in this run (their notebook stopped there; the cells before count): %s\n", strings.Join(errs, "; "))
}

// writeHostSizing writes the cores and memory a room of each size needs per
// session, for a p95 cell latency of at most twice one participant's alone.
func writeHostSizing(w io.Writer, quiet map[string][]roomcap.Cell, soloSteps []step, sizes []int, capCores, think float64) error {
	fmt.Fprintf(w, "\n**The host a room needs** for a p95 cell latency of at most twice one participant's alone with a core free, everyone running the session's cells together")
	if think > 0 {
		fmt.Fprintf(w, " with %.0f s between cells", think)
	} else {
		fmt.Fprintf(w, " and pressing Run again as soon as a cell ends (the worst case the checks above measured)")
	}
	fmt.Fprintf(w, "; cores free for the participants (the hub and the host's other work come on top), memory = participants × one container's peak:\n\n")
	fmt.Fprintf(w, "| session | room | cores | p95 cell latency (limit) | a cell's time over its time alone: median / p95 | cores for 95 %% of cells within 2x alone | offered load a (cores busy if nobody waited) | Erlang C at these cores, open M/M/c with load a: P(a cell waits) | memory |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sess := range []string{"one", "two"} {
		cells := quiet[sess]
		if len(cells) == 0 {
			continue
		}
		peak := sessionPeak(soloSteps, sess)
		limit := 2 * roomcap.Quantile(0.95, walls(cells))
		for _, n := range sizes {
			if err := writeRoomRow(w, sess, n, cells, peak, limit, capCores, think); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeRoomRow writes the host for a room of n running cells; no cores
// meeting the limit is a row saying so, not an error.
func writeRoomRow(w io.Writer, sess string, n int, cells []roomcap.Cell, peak int64, limit, capCores, think float64) error {
	c, p95, err := roomcap.CoresFor(cells, n, capCores, think, limit)
	if err != nil && !errors.Is(err, roomcap.ErrNoCores) {
		return err
	}
	a := roomcap.OfferedLoad(cells, n, think)
	pc := "a >= c: none (the open queue would grow)"
	if v, err := mmc.ErlangC(max(c, 1), a); err == nil {
		pc = fmt.Sprintf("%.2f", v)
	}
	cores, slow := fmt.Sprint(c), ""
	if err != nil {
		cores = "none meets it"
	} else {
		r, err := roomcap.Room(cells, n, float64(c), capCores, think)
		if err != nil {
			return err
		}
		sd := roomcap.Slowdown(cells, r)
		slow = fmt.Sprintf("%.1fx / %.1fx", roomcap.Quantile(0.5, sd), roomcap.Quantile(0.95, sd))
	}
	within := "none meets it"
	if cs, _, err := roomcap.CoresForSlowdown(cells, n, capCores, think, 2); err == nil {
		within = fmt.Sprint(cs)
	} else if !errors.Is(err, roomcap.ErrNoCores) {
		return err
	}
	fmt.Fprintf(w, "| %s | %d | %s | %.1f s (%.1f s) | %s | %s | %.1f cores | %s | %s |\n", sess, n, cores, p95, limit, slow, within, a, pc, gb(int64(n)*peak))
	return nil
}

// writeEveryCell writes every cell of one participant alone, folded away.
func writeEveryCell(w io.Writer, soloSteps []step) {
	fmt.Fprintf(w, "\n<details><summary>Every cell of one participant alone (wall, CPU, peak memory of the container, cores the host's other work left free meanwhile)</summary>\n\n"+
		"| notebook | cell | wall | CPU | peak memory | free cores |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range soloSteps {
		for _, c := range s.Participants[0].Cells {
			free := fmt.Sprintf("not measured (step's %.2f)", freeCores(s))
			if c.FreeCores != nil {
				free = fmt.Sprintf("%.2f", *c.FreeCores)
			}
			fmt.Fprintf(w, "| %s | %d | %.2f s | %.2f s | %s | %s |\n", c.Notebook, c.Index, c.Wall, c.CPU, gb(c.MemPeak), free)
		}
	}
	fmt.Fprintf(w, "\n</details>\n")
}

// freeCores are the cores the host's other work left free during a step (at
// least 0.05: a step that ran had some).
func freeCores(s step) float64 {
	return math.Max(0.05, float64(s.Cores)-s.BackgroundCores)
}

// cellCount is "1 cell", "2 cells".
func cellCount(n int) string {
	if n == 1 {
		return "1 cell"
	}
	return fmt.Sprintf("%d cells", n)
}

func walls(cells []roomcap.Cell) []float64 {
	out := make([]float64, len(cells))
	for i, c := range cells {
		out[i] = c.Wall
	}
	return out
}

func writeDocs(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q ... %q section to write the table into", path, beginMark, endMark)
	}
	s = s[:i+len(beginMark)] + "\n\n" + table + "\n" + s[j:]
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

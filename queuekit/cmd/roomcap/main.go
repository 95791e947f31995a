// Command roomcap turns what tests/room/capacity.py measured in the real room
// into the capacity table of docs/room.md (make room-capacity runs both):
// one participant's demand per notebook and per session, the N-participant
// steps with the model's p95 cell latency beside the measured one, and the
// host a room of 30 and of 60 needs for a p95 cell latency of at most twice
// one participant's alone.
//
// The model (queuekit/roomcap) is fed the demand measured in the same run, and
// the cores it serves each step with are the host's minus those its other
// work used during that step (measured from /proc/stat), so background load
// weighs on both sides of the check alike.
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

func report(w io.Writer, m measurement, tol float64, sizes []int, think float64) (bool, error) {
	if !(m.CPULimit > 0) {
		return false, fmt.Errorf("cpu_limit %v: the model needs the containers' CPU limit", m.CPULimit)
	}
	r := &reporter{w: w, m: m, capCores: m.CPULimit,
		solo: map[string][]roomcap.Cell{}, quiet: map[string][]roomcap.Cell{}}
	for _, s := range m.Steps {
		if s.N == 1 {
			r.soloSteps = append(r.soloSteps, s)
		}
	}
	r.host()
	if err := r.alone(); err != nil {
		return false, err
	}
	r.sessions()
	ok, err := r.together(tol)
	if err != nil {
		return false, err
	}
	if len(r.errs) > 0 {
		sort.Strings(r.errs)
		fmt.Fprintf(w, "\nCells that failed in this run (their notebook stopped there; the cells before count): %s\n", strings.Join(r.errs, "; "))
	}
	if err := r.roomHost(sizes, think); err != nil {
		return false, err
	}
	r.everyCell()
	return ok, nil
}

// reporter writes docs/room.md's sections from one measurement.
type reporter struct {
	w         io.Writer
	m         measurement
	capCores  float64                   // the containers' CPU limit
	soloSteps []step                    // the steps of one participant alone
	solo      map[string][]roomcap.Cell // session -> cells measured alone
	quiet     map[string][]roomcap.Cell // the same with a core free (roomcap.Alone)
	errs      []string                  // cells that failed, every step
}

// host is the opening line: the host, the limits, the load during the run.
func (r *reporter) host() {
	w, m := r.w, r.m
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
	fmt.Fprintf(w, "; load average (1 min) %.1f to %.1f during the run.\n\n", lo, hi)
}

// alone is one participant's demand, a row per notebook; it fills solo and
// quiet.
func (r *reporter) alone() error {
	w := r.w
	fmt.Fprintf(w, "**One participant alone** (a new server, then every code cell in order, a new kernel per notebook):\n\n")
	fmt.Fprintf(w, "| notebook | cells | wall | CPU | peak memory | slowest cell: wall / CPU |\n|---|---:|---:|---:|---:|---:|\n")
	for _, s := range r.soloSteps {
		p := s.Participants[0]
		for _, e := range p.Errors {
			r.errs = append(r.errs, fmt.Sprintf("N=1 %s: %s", p.Name, e))
		}
		byNb := map[string][]roomcap.Cell{}
		for _, c := range p.Cells {
			byNb[c.Notebook] = append(byNb[c.Notebook], c)
		}
		alone, err := roomcap.Alone(p.Cells, freeCores(s), r.capCores)
		if err != nil {
			return err
		}
		for _, c := range alone {
			r.quiet[session(c.Notebook)] = append(r.quiet[session(c.Notebook)], c)
		}
		for _, nb := range s.Notebooks {
			cells := byNb[nb]
			r.solo[session(nb)] = append(r.solo[session(nb)], cells...)
			d := roomcap.Sum(cells)
			slow := roomcap.Cell{}
			for _, c := range cells {
				if c.Wall > slow.Wall {
					slow = c
				}
			}
			count := fmt.Sprint(d.Cells)
			if want := p.CellCounts[nb]; want != d.Cells {
				count = fmt.Sprintf("%d of %d", d.Cells, want)
			}
			fmt.Fprintf(w, "| %s | %s | %.1f s | %.1f s | %s | #%d: %.1f s / %.1f s |\n", nb, count, d.Wall, d.CPU, gb(d.MemPeak), slow.Index, slow.Wall, slow.CPU)
		}
	}
	return nil
}

// sessionPeak is the largest container peak memory of one participant
// alone in session sess.
func (r *reporter) sessionPeak(sess string) int64 {
	var peak int64
	for _, s := range r.soloSteps {
		p := s.Participants[0]
		if len(p.Cells) > 0 && session(p.Cells[0].Notebook) == sess {
			peak = max(peak, p.MemPeak)
		}
	}
	return peak
}

// sessions is one participant's demand a session: cells, time, memory,
// the spawn and the first cell, p95 latency measured and with a core free.
func (r *reporter) sessions() {
	w := r.w
	fmt.Fprintf(w, "\n| session | cells | wall | CPU | container's peak memory | spawn: wall / CPU | first cell after spawn: wall / CPU | p95 cell latency | p95 with a core free (model) |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, sess := range []string{"one", "two"} {
		cells := r.solo[sess]
		if len(cells) == 0 {
			fmt.Fprintf(w, "| %s | not measured in this run | | | | | | | |\n", sess)
			continue
		}
		d := roomcap.Sum(cells)
		spawn, first := "", ""
		for _, s := range r.soloSteps {
			p := s.Participants[0]
			if len(p.Cells) == 0 || session(p.Cells[0].Notebook) != sess {
				continue
			}
			spawn += fmt.Sprintf("%.0f s / %.0f s ", p.SpawnSeconds, p.SpawnCPU)
			first += fmt.Sprintf("%.1f s / %.1f s (%s) ", p.Cells[0].Wall, p.Cells[0].CPU, p.Cells[0].Notebook[:2])
		}
		fmt.Fprintf(w, "| %s | %d | %.0f s | %.0f s | %s | %s| %s| %.1f s | %.1f s |\n", sess, d.Cells, d.Wall, d.CPU, gb(r.sessionPeak(sess)), spawn, first,
			roomcap.Quantile(0.95, walls(cells)), roomcap.Quantile(0.95, walls(r.quiet[sess])))
	}
}

// together is N participants at once, the model beside the measurement; ok
// is false when a p95 falls outside tol.
func (r *reporter) together(tol float64) (ok bool, err error) {
	w, m := r.w, r.m
	base := m.Steps[0].Participants[0]
	baseCells, err := roomcap.Alone(base.Cells, freeCores(m.Steps[0]), r.capCores)
	if err != nil {
		return false, err
	}
	baseSpawn, err := roomcap.Alone([]roomcap.Cell{{Wall: base.SpawnSeconds, CPU: base.SpawnCPU}}, freeCores(m.Steps[0]), r.capCores)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(w, "\n**N participants at once** (servers started together through the hub's REST API, then every participant runs %s through its kernel API; "+
		"model: `queuekit/roomcap` fed the N = 1 cells of this run, on the cores the host's other work left free during the step):\n\n", strings.Join(m.Steps[0].Notebooks, ", "))
	fmt.Fprintf(w, "| N | spawn (slowest) measured / model | cell latency p50 | p95 measured | p95 model | model / measured | memory (sum of peaks) | cores left by other work | load average |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	ok = true
	for _, s := range m.Steps {
		if s.Kind != "sweep" {
			continue
		}
		var lat []float64
		var mem int64
		spawnMax := 0.0
		for _, p := range s.Participants {
			lat = append(lat, walls(p.Cells)...)
			mem += p.MemPeak
			spawnMax = math.Max(spawnMax, p.SpawnSeconds)
			for _, e := range p.Errors {
				r.errs = append(r.errs, fmt.Sprintf("N=%d %s: %s", s.N, p.Name, e))
			}
		}
		for nm, e := range s.SpawnFailed {
			r.errs = append(r.errs, fmt.Sprintf("N=%d %s: server did not start %s", s.N, nm, e))
		}
		n := len(s.Participants) // the servers that started
		if n == 0 {
			continue
		}
		ceff := freeCores(s)
		rm, err := roomcap.Room(baseCells, n, ceff, r.capCores, 0)
		if err != nil {
			return false, err
		}
		rs, err := roomcap.Room(baseSpawn, n, ceff, r.capCores, 0)
		if err != nil {
			return false, err
		}
		meas, pred := roomcap.Quantile(0.95, lat), roomcap.Quantile(0.95, rm.All())
		ratio := pred / meas
		mark := "within"
		if math.Abs(ratio-1) > tol {
			mark, ok = "**outside**", false
		}
		fmt.Fprintf(w, "| %d | %.0f s / %.0f s | %.1f s | %.1f s | %.1f s | %.2f (%s ±%.0f %%) | %s | %.2f of %d | %s → %s |\n",
			n, spawnMax, rs.End, roomcap.Quantile(0.5, lat), meas, pred, ratio, mark, tol*100, gb(mem), ceff, s.Cores, loads(s.LoadStart), loads(s.LoadEnd))
	}
	return ok, nil
}

// roomHost is the host a room of each size needs: the fewest cores for
// the p95 limit, the offered load, Erlang C, the memory.
func (r *reporter) roomHost(sizes []int, think float64) error {
	w := r.w
	fmt.Fprintf(w, "\n**The host a room needs** for a p95 cell latency of at most twice one participant's alone with a core free, everyone running the session's cells together")
	if think > 0 {
		fmt.Fprintf(w, " with %.0f s between cells", think)
	} else {
		fmt.Fprintf(w, " and pressing Run again as soon as a cell ends (the worst case the check above measured)")
	}
	fmt.Fprintf(w, "; cores free for the participants (the hub and the host's other work come on top), memory = participants × one container's peak:\n\n")
	fmt.Fprintf(w, "| session | room | cores | p95 cell latency (limit) | offered load a (cores busy if nobody waited) | Erlang C at these cores, open M/M/c with load a: P(a cell waits) | memory |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, sess := range []string{"one", "two"} {
		cells := r.quiet[sess]
		if len(cells) == 0 {
			continue
		}
		peak := r.sessionPeak(sess)
		limit := 2 * roomcap.Quantile(0.95, walls(cells))
		for _, n := range sizes {
			c, p95, err := roomcap.CoresFor(cells, n, r.capCores, think, limit)
			if err != nil && !errors.Is(err, roomcap.ErrNoCores) {
				return err
			}
			a := roomcap.OfferedLoad(cells, n, think)
			pc := "a >= c: none (the open queue would grow)"
			if v, err := mmc.ErlangC(max(c, 1), a); err == nil {
				pc = fmt.Sprintf("%.2f", v)
			}
			cores := fmt.Sprint(c)
			if err != nil {
				cores = "none meets it"
			}
			fmt.Fprintf(w, "| %s | %d | %s | %.1f s (%.1f s) | %.1f cores | %s | %s |\n", sess, n, cores, p95, limit, a, pc, gb(int64(n)*peak))
		}
	}
	return nil
}

// everyCell lists every cell of one participant alone, folded.
func (r *reporter) everyCell() {
	w := r.w
	fmt.Fprintf(w, "\n<details><summary>Every cell of one participant alone (wall, CPU, peak memory of the container)</summary>\n\n| notebook | cell | wall | CPU | peak memory |\n|---|---:|---:|---:|---:|\n")
	for _, s := range r.soloSteps {
		for _, c := range s.Participants[0].Cells {
			fmt.Fprintf(w, "| %s | %d | %.2f s | %.2f s | %s |\n", c.Notebook, c.Index, c.Wall, c.CPU, gb(c.MemPeak))
		}
	}
	fmt.Fprintf(w, "\n</details>\n")
}

// freeCores are the cores the host's other work left free during a step (at
// least 0.05: a step that ran had some).
func freeCores(s step) float64 {
	return math.Max(0.05, float64(s.Cores)-s.BackgroundCores)
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

package fleetrun

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
)

// proc is one worker process.
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	last fleet.Stats
	seen bool
	done chan struct{}
	err  []byte
}

// workers are a run's fleet-worker processes: every one started (procs,
// killed ones too, for their last counters) and the ones alive (live).
type workers struct {
	f   *fleet.Fleet
	cfg Config

	mu    sync.Mutex
	procs []*proc
	seq   int
	live  []*proc
	rng   *rand.Rand
}

// args are the fleet-worker command line of the worker named name.
func (ws *workers) args(name string) []string {
	o := ws.f.Options()
	args := []string{"fleet-worker", "--shards", strconv.Itoa(ws.cfg.Shards), "--slots", strconv.Itoa(ws.cfg.Slots), "--name", name,
		"--job-ms", strconv.FormatFloat(float64(ws.cfg.Job)/float64(time.Millisecond), 'f', -1, 64),
		"--table", ws.f.Table(), "--lease-ms", strconv.FormatInt(o.Lease.Milliseconds(), 10),
		"--shard-lease-ms", strconv.FormatInt(o.ShardLease.Milliseconds(), 10), "--max-skew-ms", strconv.FormatInt(o.MaxSkew.Milliseconds(), 10)}
	if ep := ws.f.Endpoint(); ep != "" {
		args = append(args, "--endpoint", ep)
	}
	if ws.cfg.WorkLog != "" {
		args = append(args, "--work-log", ws.cfg.WorkLog)
	}
	if o.PollAll {
		args = append(args, "--poll-all")
	}
	return args
}

// start starts one more worker process, which reports its counters on
// stdout as JSON lines.
func (ws *workers) start() (*proc, error) {
	ws.mu.Lock()
	ws.seq++
	n := ws.seq
	ws.mu.Unlock()
	name := fmt.Sprintf("w%03d", n)
	p := &proc{name: name, cmd: exec.Command(ws.cfg.Bin, ws.args(name)...), done: make(chan struct{})}
	if len(ws.cfg.ClockOffsets) > 0 {
		off := ws.cfg.ClockOffsets[(n-1)%len(ws.cfg.ClockOffsets)]
		p.cmd.Env = append(os.Environ(), fleet.ClockOffsetEnv+"="+off.String())
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr := &limitedBuffer{max: 4096}
	p.cmd.Stderr = stderr
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s fleet-worker: %w", ws.cfg.Bin, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			var st fleet.Stats
			if json.Unmarshal(sc.Bytes(), &st) == nil {
				p.mu.Lock()
				p.last, p.seen = st, true
				p.mu.Unlock()
			}
		}
		_ = p.cmd.Wait()
		p.mu.Lock()
		p.err = stderr.Bytes()
		p.mu.Unlock()
		close(p.done)
	}()
	ws.mu.Lock()
	ws.procs = append(ws.procs, p)
	ws.mu.Unlock()
	return p, nil
}

// startAll starts the first n workers.
func (ws *workers) startAll(n int) error {
	ws.rng = rand.New(rand.NewPCG(ws.cfg.Seed, 3))
	ws.live = make([]*proc, 0, n)
	for range n {
		p, err := ws.start()
		if err != nil {
			return err
		}
		ws.live = append(ws.live, p)
	}
	return nil
}

// killOne SIGKILLs a live worker chosen at random and starts a replacement
// in its place.
func (ws *workers) killOne() (victim, replacement string, err error) {
	i := ws.rng.IntN(len(ws.live))
	v := ws.live[i]
	_ = v.cmd.Process.Kill()
	<-v.done
	p, err := ws.start()
	if err != nil {
		return v.name, "", err
	}
	ws.live[i] = p
	return v.name, p.name, nil
}

// exitedOnItsOwn is an error naming the first live worker that exited
// (none was asked to), with its stderr.
func (ws *workers) exitedOnItsOwn() error {
	for _, p := range ws.live {
		select {
		case <-p.done:
			return fmt.Errorf("fleet-worker %s exited on its own (%v): %s", p.name, p.cmd.ProcessState, oneLine(p.err))
		default:
		}
	}
	return nil
}

// ended is the jobs ended (succeeded or fatal) by the workers' last
// counts; a killed worker's last second is missing.
func (ws *workers) ended() int {
	n := 0
	for _, st := range ws.reports() {
		n += st.Succeeded + st.Fatal
	}
	return n
}

// reports are the last counters of every worker that reported any, in the
// order they were started.
func (ws *workers) reports() []fleet.Stats {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []fleet.Stats
	for _, p := range ws.procs {
		p.mu.Lock()
		if p.seen {
			out = append(out, p.last)
		}
		p.mu.Unlock()
	}
	return out
}

// stopAll sends every worker SIGTERM and waits for it, SIGKILLing one that
// has not exited after 30 s.
func (ws *workers) stopAll() {
	ws.mu.Lock()
	ps := slices.Clone(ws.procs)
	ws.mu.Unlock()
	for _, p := range ps {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range ps {
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := b.max - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}

func oneLine(b []byte) string { return strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", "; ") }

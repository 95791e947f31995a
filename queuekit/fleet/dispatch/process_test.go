package dispatch_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/fleet/dispatch"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// buildCLI builds the queuekit command once for the package's tests.
func buildCLI(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "queuekit-dispatch-test-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "queuekit")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/queuekit").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build the CLI: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// proc is one `queuekit fleet dispatcher` or `fleet executor` process; last
// is its last JSON line of counters (fleet.Stats or dispatch.ExecutorStats).
type proc struct {
	name string
	cmd  *exec.Cmd
	mu   sync.Mutex
	last []byte
	errb bytes.Buffer
	done chan struct{}
}

// startProc starts `queuekit fleet <role>` on the rig's table and queue.
func (r *rig) startProc(role, name string, args ...string) *proc {
	t := r.t
	t.Helper()
	all := append([]string{"fleet", role, "--endpoint", r.f.Endpoint(), "--table", r.f.Table(),
		"--sqs-endpoint", sqstest.Endpoint(t), "--queue", r.tier.Queue().Name, "--visibility-s", "2", "--name", name,
		"--lease-ms", strconv.Itoa(int(testLease / time.Millisecond)), "--shard-lease-ms", strconv.Itoa(int(testShardLease / time.Millisecond))}, args...)
	p := &proc{name: name, cmd: exec.Command(buildCLI(t), all...), done: make(chan struct{})}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.last = append(p.last[:0], sc.Bytes()...)
			p.mu.Unlock()
		}
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// execStats is an executor process's last counters.
func (p *proc) execStats(t *testing.T) dispatch.ExecutorStats {
	t.Helper()
	return lastStats[dispatch.ExecutorStats](t, p)
}

// dispStats is a dispatcher process's last counters.
func (p *proc) dispStats(t *testing.T) fleet.Stats {
	t.Helper()
	return lastStats[fleet.Stats](t, p)
}

// lastStats decodes the last JSON line p printed: a process's counters.
func lastStats[S any](t *testing.T, p *proc) S {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var st S
	if err := json.Unmarshal(p.last, &st); err != nil {
		t.Fatalf("%s: last line %q: %v", p.name, p.last, err)
	}
	return st
}

func (p *proc) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(s); err != nil {
		t.Fatalf("%s: %v: %v", p.name, s, err)
	}
}

// stop sends SIGTERM, once the process has printed its first counters
// (it handles signals by then), and waits for a clean exit.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		p.mu.Lock()
		up := len(p.last) > 0
		p.mu.Unlock()
		if up {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s printed nothing within 30 s: %s", p.name, p.errb.String())
		}
	}
	p.signal(t, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not stop within 30 s of SIGTERM", p.name)
	}
	if !p.cmd.ProcessState.Success() {
		t.Fatalf("%s exited %v: %s", p.name, p.cmd.ProcessState, p.errb.String())
	}
}

// workLog reads the work log: per job, the attempts whose work finished.
func workLog(t *testing.T, path string) map[string][]int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		id, a, ok := strings.Cut(line, " ")
		n, err := strconv.Atoi(a)
		if !ok || err != nil {
			t.Fatalf("work log line %q: want \"<job_id> <attempt>\"", line)
		}
		out[id] = append(out[id], n)
	}
	return out
}

// waitBusy waits until some job is held (its work under way).
func (r *rig) waitBusy() {
	r.t.Helper()
	r.waitHeld("e")
}

// waitHeld waits until a job is held by an executor whose name starts
// with prefix ("e1": that one; "e": any).
func (r *rig) waitHeld(prefix string) {
	r.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if len(r.heldBy(prefix)) > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	r.t.Fatalf("no executor %s* held a job within 30 s", prefix)
}

// heldBy lists the jobs whose holder's name starts with prefix.
func (r *rig) heldBy(prefix string) []fleet.Job {
	r.t.Helper()
	jobs, err := r.f.ListAllJobs(r.ctx, "user-000")
	if err != nil {
		r.t.Fatal(err)
	}
	var held []fleet.Job
	for _, j := range jobs {
		if j.Holder != "" && strings.HasPrefix(j.Holder, prefix) {
			held = append(held, j)
		}
	}
	return held
}

// Real processes: 2 dispatchers and 4 executors; one executor SIGKILLed in
// the middle of its jobs and one dispatcher SIGKILLed too. Every job ends
// SUCCESS exactly once, by its last claim; the killed executor's jobs were
// run again (attempt 2) after their leases; the killed dispatcher's shards
// are all the other's.
func TestKilledExecutorAndDispatcherProcessesEveryJobEndsOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, 8)
	const n = 200
	r.submit(n, 3)
	logPath := filepath.Join(t.TempDir(), "work.log")
	d1 := r.startProc("dispatcher", "d1", "--shards", "8", "--page", "20", "--resend-ms", "3000")
	d2 := r.startProc("dispatcher", "d2", "--shards", "8", "--page", "20", "--resend-ms", "3000")
	// e1's jobs take 2 s (its heartbeats keep their leases), the others'
	// 150 ms: e1 still holds the job it was seen holding when it is killed,
	// however slowly this machine reads the table.
	var execs []*proc
	for i := range 4 {
		ms := "150"
		if i == 0 {
			ms = "2000"
		}
		execs = append(execs, r.startProc("executor", fmt.Sprintf("e%d", i+1), "--slots", "4", "--job-ms", ms, "--wait-s", "1", "--work-log", logPath))
	}
	r.waitHeld("e1")
	execs[0].signal(t, syscall.SIGKILL)
	d1.signal(t, syscall.SIGKILL)
	killed := time.Now()
	// A dead process changes nothing: what e1 holds now, it held at the kill.
	orphans := r.heldBy("e1")
	if len(orphans) == 0 {
		t.Fatal("e1 held no job at its kill (seen holding one just before): nothing to take over")
	}
	r.waitDone(2 * time.Minute)
	t.Logf("all jobs ended %s after the kills", time.Since(killed).Round(time.Millisecond))
	for _, p := range execs[1:] {
		p.stop(t)
	}
	// d2 owns every shard (d1's were stale, then taken) before it leaves:
	// within a few shard leases (on a loaded machine d2 may lose a lease
	// and give the shard back, then take it again at a later rebalance).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		states, err := r.f.ShardStates(r.ctx)
		if err != nil {
			t.Fatal(err)
		}
		var notD2 []string
		for _, s := range states {
			if s.Holder != "d2" {
				notD2 = append(notD2, fmt.Sprintf("shard %d held by %q", s.Shard, s.Holder))
			}
		}
		if len(notD2) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("10 s after the jobs ended: %s; want every shard held by d2, the only dispatcher alive", strings.Join(notD2, ", "))
			break
		}
	}
	d2.stop(t)
	r.runs = workLog(t, logPath)
	byID := r.checkEndedOnce(n)
	again := 0
	for _, j := range byID {
		if j.Attempt >= 2 {
			again++
		}
	}
	for _, o := range orphans {
		if j := byID[o.JobID]; j.Attempt <= o.Attempt {
			t.Errorf("job %s, held by e1 at attempt %d when it was killed, ended at attempt %d; want a later one (taken over)", o.JobID, o.Attempt, j.Attempt)
		}
	}
	var refused, won int
	for _, p := range execs[1:] {
		st := p.execStats(t)
		won, refused = won+st.Won, refused+st.Refused
	}
	t.Logf("e1 held %d jobs at its kill; %d jobs run again after the kills; the live executors won %d claims, refused %d", len(orphans), again, won, refused)
}

// An executor paused (SIGSTOP) in the middle of its jobs for 3 leases:
// its jobs are taken over by the others and end once; resumed (SIGCONT),
// it finds its leases gone (fenced, or expired before any renewal) and
// ends nothing.
func TestPausedExecutorProcessIsFencedAndNothingEndsTwice(t *testing.T) {
	t.Parallel()
	r := newRig(t, 4)
	const n = 120
	r.submit(n, 3)
	logPath := filepath.Join(t.TempDir(), "work.log")
	d := r.startProc("dispatcher", "d1", "--shards", "4", "--page", "20", "--resend-ms", "3000")
	// e1's jobs take 2 s (heartbeats keep their leases), the others' 300
	// ms: e1 still holds the job it was seen holding when it is paused.
	var execs []*proc
	for i := range 4 {
		ms := "300"
		if i == 0 {
			ms = "2000"
		}
		execs = append(execs, r.startProc("executor", fmt.Sprintf("e%d", i+1), "--slots", "4", "--job-ms", ms, "--wait-s", "1", "--work-log", logPath))
	}
	r.waitHeld("e1")
	execs[0].signal(t, syscall.SIGSTOP)
	paused := time.Now()
	held := r.heldBy("e1")
	if len(held) == 0 {
		t.Fatal("e1 held no job when paused (seen holding one just before): nothing to fence")
	}
	// Paused at least 3 leases, and until every job it held was taken over
	// (its token moved on): a busy machine may take longer than 3 leases.
	time.Sleep(3 * testLease)
	waitTaken := func() bool {
		now := map[string]fleet.Job{}
		jobs, err := r.f.ListAllJobs(r.ctx, "user-000")
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			now[j.JobID] = j
		}
		for _, h := range held {
			if now[h.JobID].Token == h.Token {
				return false
			}
		}
		return true
	}
	for !waitTaken() {
		if time.Since(paused) > time.Minute {
			t.Fatalf("e1's %d jobs not all taken over within a minute of its pause", len(held))
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("e1's %d jobs taken over; it resumes %s after its pause", len(held), time.Since(paused).Round(100*time.Millisecond))
	execs[0].signal(t, syscall.SIGCONT)
	r.waitDone(2 * time.Minute)
	for _, p := range execs {
		p.stop(t)
	}
	d.stop(t)
	pst := execs[0].execStats(t)
	if pst.Fenced < len(held) {
		t.Errorf("the paused executor: %+v; want its %d attempts taken over while it was paused fenced", pst, len(held))
	}
	r.runs = workLog(t, logPath)
	// A paused attempt may have finished its work (a work-log line: the work
	// runs at least once) but not its end; checkEndedOnce wants a line of
	// the attempt that ended the job.
	r.checkEndedOnce(n)
	t.Logf("the paused executor: won %d, fenced %d (expired %d), succeeded %d", pst.Won, pst.Fenced, pst.Expired, pst.Succeeded)
}

// A kill storm: every 700 ms a process of 2 dispatchers and 4 executors
// is SIGKILLed (an executor, and every third time a dispatcher) and a
// replacement of the same role started under a new name (8 kills), while
// 300 jobs of 300 ms run. Every job ends SUCCESS
// exactly once, by its last claim's token, with a work-log line of that
// attempt; jobs whose executor was killed ran again.
func TestKillStormEveryJobEndsOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, 8)
	const n = 300
	r.submit(n, 0)
	logPath := filepath.Join(t.TempDir(), "work.log")
	type live struct {
		role string
		p    *proc
	}
	starts := r.starter([]string{"--shards", "8", "--page", "20", "--resend-ms", "3000"},
		[]string{"--slots", "4", "--job-ms", "300", "--wait-s", "1", "--work-log", logPath})
	start := func(role string) live { return live{role, starts(role)} }
	procs := []live{start("dispatcher"), start("dispatcher")}
	for range 4 {
		procs = append(procs, start("executor"))
	}
	r.waitBusy()
	for i := range 8 {
		time.Sleep(700 * time.Millisecond)
		k := 2 + i%4 // an executor, and every third kill a dispatcher
		if i%3 == 2 {
			k = i % 2
		}
		procs[k].p.signal(t, syscall.SIGKILL)
		procs[k] = start(procs[k].role)
	}
	r.waitDone(2 * time.Minute)
	for _, l := range procs {
		l.p.stop(t)
	}
	r.runs = workLog(t, logPath)
	byID := r.checkEndedOnce(n)
	again := 0
	for _, j := range byID {
		if j.Attempt >= 2 {
			again++
		}
	}
	if again == 0 {
		t.Error("no job ran twice: the killed executors held none (want their jobs taken over)")
	}
	// How long after their leases' ends the jobs were taken over (logged:
	// in the parallel test run the storm's processes starve, so the bound
	// is asserted by TestTakeoverIsBoundedWhileShardsChangeHands, which
	// runs after it, alone).
	took := takeovers(t, byID)
	t.Logf("8 kills; %d jobs ran again; takeovers after their lease's end: %s (the design's bound %s)", again, took, takeoverBound)
}

// starter starts the storms' processes: `fleet dispatcher` with dispArgs
// or `fleet executor` with execArgs, each under a new name (d1, e2, ...).
func (r *rig) starter(dispArgs, execArgs []string) func(role string) *proc {
	next := 0
	return func(role string) *proc {
		next++
		name := fmt.Sprintf("%c%d", role[0], next)
		if role == "dispatcher" {
			return r.startProc(role, name, dispArgs...)
		}
		return r.startProc(role, name, execArgs...)
	}
}

// takeoverBound is the design's bound on how long after a held job's lease
// ends (its holder dead) the job is claimed again, with the fleet's default
// MaxSkew (1 s) and the rig's leases: its lease MaxSkew past on the owner's
// clock; if the shard's owner died too, the shard's lease ended (at most a
// shard lease), MaxSkew past, then a rebalance (a quarter shard lease);
// the owner's next look from the shard's head (at most 4 idle) and a round
// (an idle); and, when the executor that received the message died before
// its claim, the dispatcher's resend (docs/design/fleet.md, "Two tiers:
// takeover"): 8.75 s with the rig's settings (shard lease, the default
// idle of 500 ms, the storms' resend of 3 s). The calls' own time and a
// replacement process's start come on top; the bound holds on a quiet
// machine, and the takeover test adds busyAllowance for a loaded one.
const takeoverBound = stormMaxSkew + (testShardLease + stormMaxSkew + testShardLease/4) + 4*stormIdle + stormIdle + stormResend

const (
	stormMaxSkew = time.Second            // the fleet's default MaxSkew
	stormIdle    = 500 * time.Millisecond // the dispatchers' default Idle
	stormResend  = 3 * time.Second        // the storms' --resend-ms
)

// busyAllowance is what the takeover test adds to the design's bound for a
// loaded machine: under four busy loops a core the kill storms took jobs
// over up to 13.6 s after their leases ended, 4.9 s past the 8.75 s bound
// (on a quiet machine, at most 7.6 s). In the parallel test run of a cold
// CI (the JVMs warming, every package's processes at once) the kill storm
// took them over a median 14.1 s and at most 20.5 s after: no allowance
// holds there, so the bound is asserted only in the run after it, alone.
const busyAllowance = 6 * time.Second

// checkTakeovers asserts that every job whose last claim was a takeover
// (lost_attempts > 0) was claimed within bound of its lease's end
// (takeover_ms: one clock here, so exact), and returns their spread.
func checkTakeovers(t *testing.T, byID map[string]fleet.Job, bound time.Duration) spread {
	t.Helper()
	for id, j := range byID {
		if d := time.Duration(j.TakeoverMS) * time.Millisecond; j.LostAttempts > 0 && d > bound {
			t.Errorf("%s: taken over %s after its lease ended (attempt %d, lost %d): the bound is %s", id, d, j.Attempt, j.LostAttempts, bound)
		}
	}
	return takeovers(t, byID)
}

// takeovers is the spread of takeover_ms over the jobs whose last claim
// was a takeover (lost_attempts > 0), each of which must have one.
func takeovers(t *testing.T, byID map[string]fleet.Job) spread {
	t.Helper()
	var ms []float64
	for id, j := range byID {
		if j.LostAttempts == 0 {
			continue
		}
		if j.TakeoverMS <= 0 {
			t.Errorf("%s: %d lost attempts, takeover_ms %d: want the time from the lease's end to the takeover", id, j.LostAttempts, j.TakeoverMS)
			continue
		}
		ms = append(ms, float64(j.TakeoverMS)/1000)
	}
	return spreadOf(ms)
}

// spread is a sample's size, median and largest value (seconds).
type spread struct {
	n        int
	med, max float64
}

func spreadOf(x []float64) spread {
	if len(x) == 0 {
		return spread{}
	}
	slices.Sort(x)
	return spread{len(x), x[len(x)/2], x[len(x)-1]}
}

func (s spread) String() string {
	if s.n == 0 {
		return "none"
	}
	return fmt.Sprintf("%d, median %.1f s, largest %.1f s", s.n, s.med, s.max)
}

// Backpressure under overload: 240 jobs due at once for 2 executors of 2
// slots running 400 ms jobs (they drain 10 a second: 24 s of work arrives
// at once, the worst case of jobs due faster than the slots drain them),
// one dispatcher with a buffer of 4 messages and a resend of 3 s. What
// waits in the queue stays within the buffer plus the dispatcher's
// rounding up (the bound in fleet.DispatcherConfig.Room) and a round the depth it
// read may not have counted yet, the backlog waits in the
// due index, the executors take only what their free slots claim, and
// each job is sent about once: at most 1.1 messages sent and 0.1 claims
// refused per job ended (the bound). Before the bound one
// dispatcher sent its whole backlog and sent it again every resend.
func TestBackpressureHoldsTheBacklogInTheIndex(t *testing.T) {
	t.Parallel()
	r := newRig(t, 2)
	const n, buffer, slots = 240, 4, 2
	r.submit(n, 3)
	logPath := filepath.Join(t.TempDir(), "work.log")
	d := r.startProc("dispatcher", "d1", "--shards", "2", "--page", "20", "--resend-ms", "3000", "--idle-ms", "100", "--buffer", strconv.Itoa(buffer))
	var execs []*proc
	for i := range 2 {
		execs = append(execs, r.startProc("executor", fmt.Sprintf("e%d", i+1), "--slots", strconv.Itoa(slots), "--job-ms", "400", "--wait-s", "1", "--work-log", logPath))
	}
	// Sample the queue and the index while the backlog drains.
	var maxVisible, maxUnclaimed, samples, backlogged int
	deadline := time.Now().Add(2 * time.Minute)
	for {
		dp, err := r.sqs.Depth(r.ctx, r.tier.Queue())
		if err != nil {
			t.Fatal(err)
		}
		left, err := r.f.Unfinished(r.ctx, r.shards)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		samples++
		maxVisible = max(maxVisible, dp.Visible)
		// Received and not yet deleted: being claimed, or claimed and
		// waiting for the deleter's batch (at most 100 ms).
		maxUnclaimed = max(maxUnclaimed, dp.Visible+dp.InFlight)
		if left > 2*slots*2+2*buffer {
			backlogged++
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d jobs unfinished after 2 min", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range execs {
		p.stop(t)
	}
	d.stop(t)
	ds := d.dispStats(t)
	var won, refused, received int
	for _, p := range execs {
		st := p.execStats(t)
		won, refused, received = won+st.Won, refused+st.Refused, received+st.Received
	}
	r.runs = workLog(t, logPath)
	r.checkEndedOnce(n)
	t.Logf("%d samples (%d with a backlog in the index): the queue held at most %d waiting, %d waiting or in flight; sent %d (%d again), %d rounds full, %d room looks; received %d, won %d, refused %d",
		samples, backlogged, maxVisible, maxUnclaimed, ds.Dispatched, ds.Resent, ds.Full, ds.RoomLooks, received, won, refused)
	if backlogged < 10 {
		t.Fatalf("only %d samples saw a backlog: the overload was not exercised", backlogged)
	}
	// One dispatcher owning both shards rounds its share up by at most 1;
	// and the depth it reads may not count its last round's sends yet
	// (ElasticMQ under four busy loops a core once showed 8 waiting; AWS's
	// count is approximate): at most one round more.
	if maxVisible > 2*buffer+1 {
		t.Errorf("the queue held %d messages waiting; want at most the buffer %d, plus a round the depth may not count yet, + 1 (the backlog waits in the index)", maxVisible, buffer)
	}
	if ds.Full == 0 {
		t.Error("no round found the queue full: the backpressure never acted")
	}
	if sent := float64(ds.Dispatched) / n; sent > 1.1 {
		t.Errorf("%d messages sent for %d jobs (%.2f a job); want at most 1.1", ds.Dispatched, n, sent)
	}
	if ref := float64(refused) / n; ref > 0.1 {
		t.Errorf("%d claims refused for %d jobs (%.2f a job); want at most 0.1", refused, n, ref)
	}
}

// Takeover while shards change hands (issue 45): 3 dispatchers of which
// one is SIGKILLed and replaced every 1.2 s for as long as jobs remain (so
// a dispatcher lives 3.6 s, less than a job lease: 4 s here), and 4
// executors of 2 slots running 5 s jobs (heartbeats keep their leases),
// one of them SIGKILLed and replaced every 4.8 s. A held job is taken over
// within the design's bound from its lease's end whoever owns its shard
// meanwhile: a new owner takes a lease MaxSkew past its end at its first
// look instead of watching it for a whole lease again. With --max-skew-ms
// 0 (the watch alone) no owner lived long enough to watch a lease through:
// 10 of 32 jobs were still held by dead executors after 101 kills (121 s)
// and the test failed; with the rule, two runs took jobs over a median 3.4
// and 2.9 s after their leases ended, at most 9.2 and 9.1 s. Every job ends
// SUCCESS once.
func TestTakeoverIsBoundedWhileShardsChangeHands(t *testing.T) {
	t.Parallel()
	r := newRig(t, 8)
	const n = 24
	r.submit(n, 0)
	logPath := filepath.Join(t.TempDir(), "work.log")
	start := r.starter([]string{"--shards", "8", "--page", "20", "--resend-ms", "3000", "--lease-ms", "4000"},
		[]string{"--slots", "2", "--job-ms", "5000", "--wait-s", "1", "--lease-ms", "4000", "--work-log", logPath})
	disp := []*proc{start("dispatcher"), start("dispatcher"), start("dispatcher")}
	var exec []*proc
	for range 4 {
		exec = append(exec, start("executor"))
	}
	r.waitBusy()
	kills := 0
	for i := 0; ; i++ {
		left, err := r.f.Unfinished(r.ctx, r.shards)
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			break
		}
		if i > 100 {
			t.Fatalf("%d jobs still unfinished after %d kills", left, kills)
		}
		time.Sleep(1200 * time.Millisecond)
		disp[i%3].signal(t, syscall.SIGKILL)
		disp[i%3] = start("dispatcher")
		if i%4 == 3 {
			exec[i/4%4].signal(t, syscall.SIGKILL)
			exec[i/4%4] = start("executor")
		}
		kills++
	}
	for _, p := range append(disp, exec...) {
		p.stop(t)
	}
	r.runs = workLog(t, logPath)
	byID := r.checkEndedOnce(n)
	bound := takeoverBound + busyAllowance
	took := checkTakeovers(t, byID, bound)
	if took.n == 0 {
		t.Error("no job was taken over: the killed executors held none (want their jobs taken over)")
	}
	t.Logf("%d kills; takeovers after their lease's end: %s (bound %s)", kills, took, bound)
}

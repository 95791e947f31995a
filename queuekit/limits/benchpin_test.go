package limits

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The overhead benchmarks' pinned mode (-pin, `make bench-limits-pinned`):
// the case of a participant's laptop, which has more cores than the client,
// the layer and DynamoDB Local keep busy. DynamoDB Local's JVM (all its
// threads) runs on one CPU of its own and the benchmark's process and the
// `queuekit limits` process on another, in both arms alike, so that Local is
// the bottleneck and the layer's CPU does not come out of Local's core; the
// ratio then says what the extra hop costs Local's throughput. Other work on
// the machine is not pinned away: it still shares both CPUs.

var pinCPUs = flag.Bool("pin", false,
	"benchmarks: pin DynamoDB Local's JVM (every thread) to one CPU and this process and the layer to another, in both arms, "+
		"restoring Local's affinity afterwards (needs taskset from util-linux and 2 CPUs; a killed run leaves Local pinned: taskset -a -p -c <all CPUs> <pid>)")

var benchWorkers = flag.Int("bench-workers", 8, "benchmarks: the overhead benchmarks' client goroutines")

// pinned is where -pin put the processes.
type pinned struct{ client, local int } // CPUs

// pinSide pins DynamoDB Local (pid) to the second CPU this process may use
// and this process to the first, with GOMAXPROCS 1 (the layer process,
// started under taskset on the same CPU, gets 1 from its affinity); the
// test's cleanup restores both affinities and GOMAXPROCS.
func pinSide(b *testing.B, localPID int) pinned {
	b.Helper()
	if _, err := exec.LookPath("taskset"); err != nil {
		b.Fatalf("-pin needs the taskset command (util-linux; Debian: apt-get install util-linux): %v", err)
	}
	if localPID == 0 {
		b.Fatalf("-pin: DynamoDB Local's process not found (no .jvm pid file of queuekit servers for its port, and no process of yours listens on it), so it cannot be pinned")
	}
	if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", localPID)); strings.TrimSpace(string(comm)) != "java" {
		b.Fatalf("-pin: process %d, taken for DynamoDB Local, is %q, not java", localPID, strings.TrimSpace(string(comm)))
	}
	self := os.Getpid()
	mine, err := affinity(self)
	if err != nil {
		b.Fatal(err)
	}
	cpus, err := cpuList(mine)
	if err != nil {
		b.Fatal(err)
	}
	if len(cpus) < 2 {
		b.Fatalf("-pin needs 2 CPUs; this process may use %q only", mine)
	}
	p := pinned{client: cpus[0], local: cpus[1]}
	localWas, err := affinity(localPID)
	if err != nil {
		b.Fatal(err)
	}
	if err := setAffinity(localPID, p.local); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if out, err := exec.Command("taskset", "-a", "-p", "-c", localWas, strconv.Itoa(localPID)).CombinedOutput(); err != nil {
			b.Errorf("restore DynamoDB Local's affinity (pid %d) to %s: %v: %s; run: taskset -a -p -c %s %d", localPID, localWas, err, out, localWas, localPID)
		}
	})
	if err := setAffinity(self, p.client); err != nil {
		b.Fatal(err)
	}
	procs := runtime.GOMAXPROCS(1)
	b.Cleanup(func() {
		_ = exec.Command("taskset", "-a", "-p", "-c", mine, strconv.Itoa(self)).Run()
		runtime.GOMAXPROCS(procs)
	})
	return p
}

// affinity is a process's CPU list as taskset prints it ("0,1", "0-7").
func affinity(pid int) (string, error) {
	out, err := exec.Command("taskset", "-c", "-p", strconv.Itoa(pid)).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("taskset -c -p %d: %v: %s", pid, err, out)
	}
	_, list, ok := strings.Cut(strings.TrimSpace(string(out)), ": ")
	if !ok {
		return "", fmt.Errorf("taskset -c -p %d said %q", pid, out)
	}
	return list, nil
}

// setAffinity pins every thread of pid to cpu.
func setAffinity(pid, cpu int) error {
	if out, err := exec.Command("taskset", "-a", "-p", "-c", strconv.Itoa(cpu), strconv.Itoa(pid)).CombinedOutput(); err != nil {
		return fmt.Errorf("taskset -a -p -c %d %d: %v: %s", cpu, pid, err, out)
	}
	return nil
}

// cpuList reads a CPU list such as "0-2,5" into 0, 1, 2, 5.
func cpuList(s string) ([]int, error) {
	var cpus []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %v", s, err)
		}
		z := a
		if isRange {
			if z, err = strconv.Atoi(hi); err != nil {
				return nil, fmt.Errorf("CPU list %q: %v", s, err)
			}
		}
		for c := a; c <= z; c++ {
			cpus = append(cpus, c)
		}
	}
	return cpus, nil
}

// cpuBusy is the busy and total time of each CPU so far, from /proc/stat
// (every process on the machine, not only the benchmark's three).
type cpuBusy struct{ busy, total []time.Duration }

func readCPUBusy() cpuBusy {
	var c cpuBusy
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return c
	}
	for line := range strings.Lines(string(b)) {
		f := strings.Fields(line)
		if len(f) < 5 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		var total, idle int64
		for i, v := range f[1:] {
			if i >= 8 { // guest times are counted in user already
				break
			}
			x, _ := strconv.ParseInt(v, 10, 64)
			total += x
			if i == 3 || i == 4 { // idle, iowait
				idle += x
			}
		}
		for len(c.busy) <= n {
			c.busy, c.total = append(c.busy, 0), append(c.total, 0)
		}
		c.busy[n], c.total[n] = time.Duration(total-idle)*10*time.Millisecond, time.Duration(total)*10*time.Millisecond
	}
	return c
}

func (c cpuBusy) sub(d cpuBusy) cpuBusy {
	r := cpuBusy{busy: slices.Clone(c.busy), total: slices.Clone(c.total)}
	for i := range min(len(r.busy), len(d.busy)) {
		r.busy[i] -= d.busy[i]
		r.total[i] -= d.total[i]
	}
	return r
}

func (c cpuBusy) add(d cpuBusy) cpuBusy {
	if len(c.busy) == 0 {
		return d
	}
	r := cpuBusy{busy: slices.Clone(c.busy), total: slices.Clone(c.total)}
	for i := range min(len(r.busy), len(d.busy)) {
		r.busy[i] += d.busy[i]
		r.total[i] += d.total[i]
	}
	return r
}

// String is each CPU's busy share, e.g. "CPU0 0.62, CPU1 0.98".
func (c cpuBusy) String() string {
	var parts []string
	for i := range c.busy {
		if c.total[i] > 0 {
			parts = append(parts, fmt.Sprintf("CPU%d %.2f", i, float64(c.busy[i])/float64(c.total[i])))
		}
	}
	return strings.Join(parts, ", ")
}

// listeningPID finds the process of yours that listens on ep's port on
// 127.0.0.1 (/proc/net/tcp, then the sockets among /proc/PID/fd), for a
// DynamoDB Local this repository's script did not start; 0 when none.
func listeningPID(ep string) int {
	u, err := url.Parse(ep)
	if err != nil {
		return 0
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return 0
	}
	inodes := map[string]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(b)) {
			fs := strings.Fields(line)
			// sl local_address rem_address st ... inode (field 9); st 0A is LISTEN
			if len(fs) < 10 || fs[3] != "0A" {
				continue
			}
			_, hexPort, _ := strings.Cut(fs[1], ":")
			if p, err := strconv.ParseInt(hexPort, 16, 32); err == nil && int(p) == port {
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0
	}
	procs, _ := filepath.Glob("/proc/[0-9]*/fd")
	for _, dir := range procs {
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink(filepath.Join(dir, fd.Name())); err == nil && inodes[l] {
				pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
				return pid
			}
		}
	}
	return 0
}

func TestBenchHelpers(t *testing.T) {
	for in, want := range map[string][]int{"0": {0}, "0,1": {0, 1}, "0-2,5": {0, 1, 2, 5}, "3-3": {3}} {
		if got, err := cpuList(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("cpuList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := cpuList("x"); err == nil {
		t.Errorf("cpuList(%q): no error", "x")
	}
	for _, c := range []struct{ calls, workers int }{{400, 8}, {400, 32}, {4800, 7}, {3, 8}} {
		n := 0
		for w := range c.workers {
			n += share(c.calls, c.workers, w)
		}
		if n != c.calls {
			t.Errorf("share(%d, %d, ·) adds up to %d", c.calls, c.workers, n)
		}
	}
}

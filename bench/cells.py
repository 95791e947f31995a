#!/usr/bin/env python3
"""CPU seconds a GoNB cell costs, per kernel setting, side by side in one run.

Usage (after scripts/setup.sh; the typical cell reads the sample night from
DynamoDB Local, so with AWS_ENDPOINT_URL_DYNAMODB set and the catalog seeded;
make bench-cells does both):

    make bench-cells [BENCH_CELLS_ARGS="--runs 9"]
    .venv/bin/python bench/cells.py [--runs 5] [--variants before,kernelspec]
    .venv/bin/python bench/cells.py --notebooks 03,08 [--runs 1] [--by-process]
    .venv/bin/python bench/cells.py --steps [--runs 5]
    .venv/bin/python bench/cells.py --gopls [--runs 3]
    ... --go-work DIR: build the cells against another checkout (a snapshot)

Default mode: for each variant (an environment the kernel starts with, as a
kernelspec's "env" gives it: "before" is GOFLAGS as Jupyter passes it on,
"kernelspec" what scripts/setup.sh installed) one Go kernel runs the setup cell once, then
--runs rounds of the measured cells (a trivial `%%` cell printing one line, a
typical table cell of notebook 03, a chart cell of notebook 08); the rounds of
the variants are interleaved (round 1 of every variant, then round 2, ...), so
a busy machine slows them alike. Each measured cell gets a `_ = <n>` line of
its own in every round, so its main.go is new and Go compiles and links it as
it does a new notebook cell (an identical main.go would be a build-cache hit).
A cell's CPU is the kernel's process tree over the cell: GoNB itself and
everything it waited for (goimports, go get, go build and its compile and link,
the cell's program), plus live children (gopls). Prints per cell and variant
the median and the range of CPU seconds, and the median over the trivial
cell's in the same kernel.

--notebooks: every code cell of whole notebooks in order, a new kernel per
variant and notebook: the mean and median CPU seconds of a code cell, and
the median cell over a trivial cell run in the same kernels; with
--by-process, the kernels' CPU and memory by command (link, go, compile,
gopls, the cells' programs), sampled every 50 ms; and the CPU DynamoDB
Local's JVM used meanwhile.

--steps: the steps GoNB runs for one cell, one by one, in a copy of a real
kernel's temporary module (its go.mod and go.work): goimports -w main.go, go
get, the compile alone (`go list -export`), the link after it (go build), go
build with nothing changed, the cell's program; each step's CPU from
getrusage of the children. Also the link with -ldflags=-s and -w.

No timed assertions: it prints figures. The machine may be busy; compare
ratios within one run.
"""
from __future__ import annotations

import argparse
import os
import queue
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")

# The setup cell: notebook 08's first code cell (imports and a helper func),
# so later cells build with the declarations a notebook accumulates.
SETUP = '''import (
	"fmt"
	"math"

	"github.com/nightqueue/workshop/queuekit/capacity"
	"github.com/nightqueue/workshop/queuekit/chart"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
)

func num(v float64, missing bool) string {
	if missing {
		return "–"
	}
	return format.Sig(v, 6)
}

%%
fmt.Println(num(math.Pi, false))
'''

CELLS = {
    "trivial": '''%%
fmt.Println("hello")
''',
    # The least a cell that reads DynamoDB can link: the SDK's DynamoDB
    # client from bare options (no lab, no config chain: no SSO or STS), one
    # ListTables call. Its CPU over the trivial cell's is the floor of any
    # such cell's ratio (docs/speed.md, Cells).
    "floor": '''import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

%%
db := dynamodb.New(dynamodb.Options{
	Region:       os.Getenv("AWS_REGION"),
	BaseEndpoint: aws.String(os.Getenv("AWS_ENDPOINT_URL_DYNAMODB")),
	Credentials:  credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), ""),
})
out, err := db.ListTables(context.Background(), &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
if err != nil {
	fmt.Println("ListTables:", err)
	return
}
fmt.Println(len(out.TableNames) > 0)
''',
    # notebook 03, cell c05: a table from the seed night
    "typical": '''import (
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lab/nightlab"
)

%%
night := nightlab.MustNight("2026-05-13")
s := night.Summarize()
fmt.Printf("%d jobs, %d exclusive, %d high priority, mean runtime %s min\\n", s.Jobs, s.ExclusiveJobs, s.HighPriorityJobs, format.Num(s.MeanRuntimeMinutes))
for _, w := range s.PerWindow {
	fmt.Printf("  requested for %s: %d jobs\\n", w.Key, w.Count)
}
var rows [][]string
for _, c := range []int{1, 2, 3, 4} {
	p, err := night.Params(c)
	lab.Stop(err)
	rows = append(rows, []string{fmt.Sprint(c), format.Num(p.Lambda), fmt.Sprintf("%.3f", p.Mu), fmt.Sprintf("%.3f", p.Rho)})
}
lab.ShowTable([]string{"c", "λ (jobs/h)", "μ (jobs/h per worker)", "ρ"}, rows)
''',
    # notebook 08, cell c16: a chart (go-echarts) and its numbers
    "chart": '''%%
loads := []float64{1e5, 1e6, 1e7, 1e8, 1e9}
var od, prov, sqs1, sqs10 []float64
for _, n := range loads {
	f := capacity.Seed003
	f.JobsPerDay = n
	d, err := capacity.Dynamo(f, capacity.DefaultLifecycle, capacity.Prices2026)
	lab.Stop(err)
	s1, err := capacity.PlanSQS(f, capacity.SQS{BatchSize: 1}, capacity.Prices2026)
	lab.Stop(err)
	s10, err := capacity.PlanSQS(f, capacity.SQS{BatchSize: 10}, capacity.Prices2026)
	lab.Stop(err)
	od, prov, sqs1, sqs10 = append(od, d.OnDemandUSDPerDay), append(prov, d.ProvisionedUSDPerDay), append(sqs1, s1.USDPerDay), append(sqs10, s10.USDPerDay)
}
lab.Stop(lab.Chart(chart.Lines("Cost per day against jobs per day (USD, log axes)", "jobs per day", "USD per day", []chart.Series{
	{Name: "DynamoDB on demand", X: loads, Y: od},
	{Name: "DynamoDB provisioned, 100% used", X: loads, Y: prov},
	{Name: "SQS, one message a call", X: loads, Y: sqs1},
	{Name: "SQS, ten messages a call", X: loads, Y: sqs10},
}, chart.LogX(), chart.LogY())))
''',
}

# Kernel environments compared, each as a kernelspec's env would set it.
# "before": the GOFLAGS the kernel inherited before the kernelspec set one
# (this environment's, as Jupyter passes it on); "kernelspec": whatever the
# installed kernelspec sets (queuekit setup: GOFLAGS plus -ldflags=-s and
# -gcflags=all=-dwarf=false); "ldflags-s": the kernelspec before the gcflags.
VARIANTS = {
    "before": {"GOFLAGS": None},
    "kernelspec": {},
    "ldflags-s": {"GOFLAGS": "-ldflags=-s"},
    "ldflags-w": {"GOFLAGS": "-ldflags=-w"},
    "gogc-200": {"GOGC": "200"},
    "ldflags-s-gogc-200": {"GOFLAGS": "-ldflags=-s", "GOGC": "200"},
}


def jupyter_env() -> dict[str, str]:
    """The environment JupyterLab gets from scripts/env.sh."""
    out = subprocess.run(["bash", "-c", 'source "$1" && env -0', "env.sh", str(ROOT / "scripts" / "env.sh")],
                         check=True, capture_output=True).stdout
    env = {}
    for item in out.split(b"\0"):
        key, sep, value = item.decode().partition("=")
        if sep:
            env[key] = value
    return env


def proc_stat(pid: int) -> tuple[int, float] | None:
    """(parent pid, CPU seconds with waited-for children) of a live process."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), sum(int(x) for x in fields[11:15]) / TICK


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def tree_cpu(root: int) -> float:
    """CPU seconds of a process, everything it waited for, and its live
    descendants (with what they waited for)."""
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            s = proc_stat(int(d))
            if s:
                stats[int(d)] = s
    kids: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        kids.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            total += stats[pid][1]
        todo.extend(kids.get(pid, []))
    return total


class Sampler:
    """Samples a kernel's process tree every 50 ms: for each process its
    command name, CPU seconds and resident memory at the last sample. A
    process that lives under 50 ms is missed, and one's last 50 ms, so the
    sum is a lower bound of the tree's CPU (which tree_cpu counts whole)."""

    def __init__(self, root: int):
        import threading
        self.root, self.seen, self.stop = root, {}, threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        page = os.sysconf("SC_PAGE_SIZE")
        while not self.stop.wait(0.05):
            stats, kids = {}, {}
            for d in os.listdir("/proc"):
                if not d.isdigit():
                    continue
                try:
                    raw = Path(f"/proc/{d}/stat").read_text()
                except OSError:
                    continue
                comm = raw[raw.index("(") + 1:raw.rindex(")")]
                f = raw.rsplit(")", 1)[1].split()
                stats[int(d)] = (comm, (int(f[11]) + int(f[12])) / TICK, int(f[21]) * page)
                kids.setdefault(int(f[1]), []).append(int(d))
            todo = [(self.root, "")]
            while todo:
                pid, parent = todo.pop()
                if pid in stats:
                    comm, cpu, rss = stats[pid]
                    # GoNB names each cell's program gonb_<hash>; what
                    # gopls runs (go list of the workspace) is gopls' cost.
                    name = "a cell's program" if comm.startswith("gonb_") else comm
                    if parent.startswith("gopls") and name != "gopls":
                        name += " (run by gopls)"
                    c, r = self.seen.get((pid, name), (0.0, 0))
                    self.seen[(pid, name)] = (max(c, cpu), max(r, rss))
                    todo.extend((k, name) for k in kids.get(pid, []))

    def close(self) -> dict[str, list]:
        """{command: [processes, CPU seconds, largest resident bytes]}."""
        self.stop.set()
        self.thread.join()
        agg: dict[str, list] = {}
        for (_, comm), (c, r) in self.seen.items():
            a = agg.setdefault(comm, [0, 0.0, 0])
            a[0], a[1], a[2] = a[0] + 1, a[1] + c, max(a[2], r)
        return agg


def server_cpu(pattern: str) -> float:
    """CPU seconds of the processes whose command line holds pattern (the
    JVM of DynamoDB Local the kernels' cells call)."""
    total = 0.0
    for d in os.listdir("/proc"):
        if d.isdigit() and pattern in _cmdline(int(d)):
            total += (proc_stat(int(d)) or (0, 0.0))[1]
    return total


class Kernel:
    """One GoNB kernel started from the installed kernelspec with extra env."""

    def __init__(self, name: str, extra: dict[str, str], base_env: dict[str, str], log: Path,
                 go_work: str | None = None):
        from jupyter_client.manager import KernelManager
        self.name = name
        env = dict(base_env)
        self.km = KernelManager(kernel_name="gonb")
        if go_work:
            # Build the cells against another checkout (a snapshot of a tree
            # others are editing) instead of the kernelspec's -go_work.
            self.km.kernel_spec.argv = [a for a in self.km.kernel_spec.argv
                                        if not a.startswith("-go_work=")] + [f"-go_work={go_work}"]
        spec_env = dict(self.km.kernel_spec.env or {})
        for k, v in extra.items():
            # None: this environment's value (or none), not the kernelspec's.
            if v is None:
                v = base_env.get(k, "")
            env[k] = v
            spec_env.pop(k, None)
        # The spec's env is applied over the env we pass: drop what we override.
        self.km.kernel_spec.env = spec_env
        self.log = open(log, "wb")
        self.km.start_kernel(env=env, cwd=str(Path(go_work or ROOT) / "notebooks"), stdout=self.log, stderr=self.log)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)
        self.pid = self.km.provisioner.pid

    def run(self, code: str, timeout: float = 300) -> tuple[float, float, str]:
        """Runs a cell; returns (CPU seconds, wall seconds, its text output)."""
        cpu0, t0 = tree_cpu(self.pid), time.monotonic()
        msg_id = self.kc.execute(code)
        out, status = [], None
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=timeout)
            except queue.Empty:
                raise TimeoutError(f"{self.name}: cell ran over {timeout} s")
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out.append(content["text"])
            elif kind in ("display_data", "execute_result"):
                data = content.get("data", {})
                out.append(str(data.get("text/markdown") or data.get("text/html") or data.get("text/plain", "")))
            elif kind == "error":
                out.append("ERROR " + content.get("evalue", ""))
                status = "error"
            elif kind == "status" and content["execution_state"] == "idle":
                break
        reply = self.kc.get_shell_msg(timeout=timeout)
        if reply["content"]["status"] != "ok" or status == "error":
            raise RuntimeError(f"{self.name}: cell failed: {''.join(out)[-800:]}")
        # Let GoNB reap what it started before reading the counters.
        time.sleep(0.05)
        return tree_cpu(self.pid) - cpu0, time.monotonic() - t0, "".join(out)

    def close(self):
        try:
            self.kc.stop_channels()
            # Graceful: GoNB then stops its gopls (a kill would leave it running).
            self.km.shutdown_kernel(now=False)
        finally:
            self.log.close()


# Random element ids (go-echarts' chart ids, GoNB's display ids): not output
# that a setting could change.
RANDOM_ID = re.compile(r"\b(?=[A-Za-z0-9_]*[0-9])(?=[A-Za-z0-9_]*[A-Za-z])[A-Za-z0-9_]{8,}\b")


def normalized(out: str) -> str:
    return RANDOM_ID.sub("ID", out)


def numbered(code: str, n: int) -> str:
    """The cell with a `_ = n` statement at the end of its main part, so its
    main.go differs from every other round's."""
    return code.rstrip("\n") + f"\n_ = {n}\n"


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):5.2f} s ({min(xs):.2f}-{max(xs):.2f})"


def bench_kernels(args) -> int:
    base = jupyter_env()
    logdir = ROOT / "tests" / "artifacts" / "bench-cells"
    logdir.mkdir(parents=True, exist_ok=True)
    names = args.variants.split(",")
    for n in names:
        if n not in VARIANTS:
            sys.exit(f"unknown variant {n!r}; known: {', '.join(VARIANTS)}")
    kernels, cpu = {}, {n: {c: [] for c in CELLS} for n in names}
    outputs = {n: {} for n in names}
    try:
        for n in names:
            kernels[n] = Kernel(n, VARIANTS[n], base, logdir / f"kernel-{n}.log", args.go_work)
            c, w, _ = kernels[n].run(SETUP)
            print(f"{n:16s} kernel up; setup cell {c:.2f} s CPU, {w:.2f} s wall", flush=True)
        serial = 1000
        for r in range(args.runs):
            for n in names:
                for cell, code in CELLS.items():
                    serial += 1
                    c, w, out = kernels[n].run(numbered(code, serial))
                    cpu[n][cell].append(c)
                    outputs[n].setdefault(cell, normalized(out))
                    if args.verbose:
                        print(f"  round {r + 1} {n:16s} {cell:8s} {c:5.2f} s CPU {w:5.2f} s wall", flush=True)
    finally:
        for k in kernels.values():
            k.close()
    same = all(outputs[n] == outputs[names[0]] for n in names)
    print(f"\nCPU seconds per cell, median (min-max) of {args.runs}, load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; outputs identical across variants: {same}")
    print(f"{'variant':16s} " + " ".join(f"{c:>22s}" for c in CELLS) + "   floor/trivial  typical/trivial  chart/trivial")
    for n in names:
        med = {c: statistics.median(cpu[n][c]) for c in CELLS}
        print(f"{n:16s} " + " ".join(f"{spread(cpu[n][c]):>22s}" for c in CELLS) +
              f"   {med['floor'] / med['trivial']:12.2f}  {med['typical'] / med['trivial']:14.2f}  {med['chart'] / med['trivial']:13.2f}")
    if len(names) > 1:
        first = names[0]
        for n in names[1:]:
            rat = [statistics.median(cpu[n][c]) / statistics.median(cpu[first][c]) for c in CELLS]
            print(f"{n} / {first}: " + ", ".join(f"{c} {x:.2f}" for c, x in zip(CELLS, rat)))
    if not same:
        for n in names:
            for c in CELLS:
                if outputs[n].get(c) != outputs[names[0]].get(c):
                    print(f"output differs: {n} {c}: {outputs[n].get(c)!r:.300}")
        return 1
    return 0


def bench_notebooks(args) -> int:
    """Every code cell of whole notebooks, in order, in a new kernel per
    variant and notebook (variants interleaved): mean and median CPU seconds
    of a code cell, as docs/room.md sums a session."""
    import json
    base = jupyter_env()
    logdir = ROOT / "tests" / "artifacts" / "bench-cells"
    logdir.mkdir(parents=True, exist_ok=True)
    names = args.variants.split(",")
    cpu: dict[str, list[float]] = {n: [] for n in names}
    trivial: dict[str, list[float]] = {}
    by_process: dict[str, dict[str, list]] = {}
    server0 = server_cpu("DynamoDBLocal")
    per_nb: dict[tuple[str, str], list[float]] = {}
    for r in range(args.runs):
        for nb in args.notebooks.split(","):
            # The notebooks of the checkout the cells build against.
            path = next((Path(args.go_work or ROOT) / "notebooks").glob(f"{nb}*.ipynb"))
            cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
            for n in names:
                k = Kernel(n, VARIANTS[n], base, logdir / f"kernel-{n}-{path.stem}.log", args.go_work)
                sampler = Sampler(k.pid) if args.by_process else None
                try:
                    # The trivial cell in the same kernel before the
                    # notebook's cells (the first cell of a kernel also sets
                    # up its module: the second one is the one that counts).
                    for i in range(2):
                        x, _, _ = k.run(numbered(CELLS["trivial"], r * 10 + i), timeout=600)
                    trivial.setdefault(n, []).append(x)
                    for c in cells:
                        code = "".join(c["source"])
                        x, w, _ = k.run(code, timeout=600)
                        cpu[n].append(x)
                        per_nb.setdefault((path.stem, n), []).append(x)
                        if args.verbose:
                            print(f"  {path.stem[:2]} {n:12s} {c.get('id', ''):8s} {x:5.2f} s CPU {w:6.2f} s wall", flush=True)
                finally:
                    if sampler:
                        for comm, (procs, c, rss) in sampler.close().items():
                            a = by_process.setdefault(n, {}).setdefault(comm, [0, 0.0, 0])
                            a[0], a[1], a[2] = a[0] + procs, a[1] + c, max(a[2], rss)
                    k.close()
                xs = per_nb[(path.stem, n)][-len(cells):]
                print(f"{path.stem} run {r + 1} {n:12s}: {len(xs)} cells, {sum(xs):6.1f} CPU s, "
                      f"mean {statistics.mean(xs):.2f}, median {statistics.median(xs):.2f}", flush=True)
    print(f"\nCPU seconds per code cell (kernel's process tree), load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for (nb, n), xs in sorted(per_nb.items()):
        print(f"  {nb:40s} {n:12s} {len(xs):3d} cells  mean {statistics.mean(xs):.2f}  median {statistics.median(xs):.2f}")
    for n in names:
        t = statistics.median(trivial[n])
        print(f"  all {len(cpu[n])} cells {n:12s} mean {statistics.mean(cpu[n]):.2f}  median "
              f"{statistics.median(cpu[n]):.2f}  trivial cell {t:.2f} {spread(trivial[n])} in the same "
              f"kernels: median cell / trivial {statistics.median(cpu[n]) / t:.1f}")
    print(f"  DynamoDB Local's JVM meanwhile (every variant's cells): {server_cpu('DynamoDBLocal') - server0:.1f} CPU s")
    for n, agg in by_process.items():
        print(f"\n  {n}: the kernels' processes by command, sampled every 50 ms (a lower bound):")
        for comm, (procs, c, rss) in sorted(agg.items(), key=lambda kv: -kv[1][1]):
            if c >= 0.05:
                print(f"    {comm:20s} {procs:4d} processes {c:7.1f} CPU s  largest {rss / 1e6:5.0f} MB resident")
    if len(names) > 1:
        for n in names[1:]:
            print(f"mean {n} / {names[0]}: {statistics.mean(cpu[n]) / statistics.mean(cpu[names[0]]):.2f}")
    return 0


def bench_gopls(args) -> int:
    """gopls' resident memory and CPU in a kernel after a completion and a
    hover, with and without .venv/bin/gopls' memory limit, interleaved."""
    import json
    base = jupyter_env()
    logdir = ROOT / "tests" / "artifacts" / "bench-cells"
    logdir.mkdir(parents=True, exist_ok=True)
    real = str(ROOT / ".venv" / "libexec" / "gopls")
    nb = ROOT / "notebooks" / "01-schema-design.ipynb"
    cells = ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"][:4]
    variants = {"no limit": {"GOPLS_GOMEMLIMIT": "off"}, "wrapper (224MiB)": {"GOPLS_GOMEMLIMIT": ""}}
    for lim in filter(None, args.gopls_limits.split(",")):
        variants[f"GOMEMLIMIT={lim}"] = {"GOPLS_GOMEMLIMIT": lim}
    res: dict[str, list[tuple[float, float]]] = {n: [] for n in variants}
    for r in range(args.runs):
        for name, extra in variants.items():
            k = Kernel(name, extra, base, logdir / "kernel-gopls.log", args.go_work)
            try:
                for code in cells:
                    k.run(code)
                code = "%%\nlab.Show"

                def reply(msg_id):
                    while True:
                        m = k.kc.get_shell_msg(timeout=120)
                        if m["parent_header"].get("msg_id") == msg_id:
                            return m["content"]
                done, found = [], None
                for _ in range(5):  # gopls may still be loading the workspace
                    done = reply(k.kc.complete(code, len(code))).get("matches", [])
                    found = reply(k.kc.inspect(code + "Table", len(code) + 5)).get("found")
                    if "ShowTable" in done and found:
                        break
                    time.sleep(2)
                if "ShowTable" not in done or not found:
                    raise RuntimeError(f"{name}: completion {done!r:.200}, hover found {found}")
                time.sleep(3)
                pids = [int(d) for d in os.listdir("/proc") if d.isdigit() and _cmdline(int(d)).startswith(real)]
                # The kernel's own gopls: a child of its gonb.
                mine = [pid for pid in pids if (proc_stat(pid) or (0, 0))[0] == k.pid]
                if len(mine) != 1:
                    raise RuntimeError(f"{name}: {len(mine)} gopls of this kernel (want 1)")
                rss = int(Path(f"/proc/{mine[0]}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
                res[name].append((rss / 1e6, proc_stat(mine[0])[1]))
                print(f"  round {r + 1} {name:16s} gopls {rss / 1e6:5.0f} MB resident, {res[name][-1][1]:5.2f} CPU s", flush=True)
            finally:
                k.close()
    print(f"\ngopls after 4 cells of notebook 01, a completion and a hover, median (min-max) of {args.runs}; "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, xs in res.items():
        print(f"  {name:16s} resident {spread([x[0] for x in xs]).replace(' s', ' MB')}  CPU {spread([x[1] for x in xs])}")
    return 0


def child_cpu(cmd: list[str], cwd: Path, env: dict[str, str]) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} in {cwd}: exit {p.returncode}: {p.stderr[-1500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bench_steps(args) -> int:
    """GoNB's steps for one cell, one by one, in a copy of a kernel's module."""
    base = jupyter_env()
    logdir = ROOT / "tests" / "artifacts" / "bench-cells"
    logdir.mkdir(parents=True, exist_ok=True)
    k = Kernel("steps", {"GOFLAGS": ""}, base, logdir / "kernel-steps.log", args.go_work)
    try:
        k.run(SETUP)
        _, _, out = k.run('%%\nfmt.Println(os.Getenv("GONB_TMP_DIR"))\n')
        tmp = Path(out.strip().splitlines()[-1])
        results: dict[str, dict[str, list[float]]] = {}
        for cell in ("trivial", "floor", "typical", "chart"):
            k.run(numbered(CELLS[cell], 1))
            work = Path(tempfile.mkdtemp(prefix=f"bench-steps-{cell}-"))
            for f in ("go.mod", "go.sum", "go.work", "go.work.sum", "main.go"):
                if (tmp / f).exists():
                    shutil.copy(tmp / f, work / f)
            src = (work / "main.go").read_text()
            env = dict(base, GOFLAGS="")
            steps: dict[str, list[float]] = {}
            for r in range(args.runs):
                # A main.go no round has built: a new cell.
                (work / "main.go").write_text(src + f"\nvar benchRound{r} = {r}\n")
                for name, cmd in (
                    ("goimports -w", ["goimports", "-w", "main.go"]),
                    ("go get", ["go", "get"]),
                    ("compile (go list -export)", ["go", "list", "-export", "-f", "{{.Export}}", "."]),
                    ("link (go build after it)", ["go", "build", "-o", "cell"]),
                    ("go build, nothing new", ["go", "build", "-o", "cell"]),
                    ("the cell's program", ["./cell"]),
                ):
                    steps.setdefault(name, []).append(child_cpu(cmd, work, env))
                for name, flags in (("link -ldflags=-s", "-ldflags=-s"), ("link -ldflags=-w", "-ldflags=-w")):
                    (work / "main.go").write_text(src + f"\nvar benchRound{r} = {r}\nvar benchFlags{len(flags)} = 1\n")
                    child_cpu(["go", "list", "-export", "-f", "{{.Export}}", "."], work, env)
                    steps.setdefault(name, []).append(child_cpu(["go", "build", "-o", "cell", flags], work, env))
                (work / "main.go").write_text(src + f"\nvar benchRound{r} = {r}\nvar benchWhole = 2\n")
                steps.setdefault("go build, compile and link", []).append(
                    child_cpu(["go", "build", "-o", "cell"], work, env))
            size = (work / "cell").stat().st_size
            deps = subprocess.run(["go", "list", "-deps", "."], cwd=work, env=env, capture_output=True,
                                  text=True, check=True).stdout.split()
            results[cell] = steps
            print(f"\n{cell}: links {len(deps)} packages ({sum('nightqueue' in d for d in deps)} of the workshop's); "
                  f"binary {size / 1e6:.1f} MB (default flags)")
            for name, xs in steps.items():
                print(f"  {name:28s} {spread(xs)}")
            shutil.rmtree(work)
    finally:
        k.close()
    print(f"\nload average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--variants", default="before,kernelspec",
                    help="comma-separated, first is the reference: " + ", ".join(VARIANTS))
    ap.add_argument("--notebooks", help="run every code cell of these notebooks instead "
                    "(comma-separated prefixes: 03,08)")
    ap.add_argument("--steps", action="store_true", help="time GoNB's steps one by one")
    ap.add_argument("--by-process", action="store_true", help="with --notebooks: the kernels' "
                    "CPU and memory by command (link, go, compile, gopls, ...), sampled")
    ap.add_argument("--go-work", help="build the cells against this checkout (default: the "
                    "kernelspec's -go_work, this repository)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--gopls", action="store_true", help="gopls' memory and CPU after a completion, "
                    "with and without the wrapper's memory limit")
    ap.add_argument("--gopls-limits", default="", help="with --gopls: more GOMEMLIMIT values to compare (224MiB,...)")
    args = ap.parse_args()
    if args.gopls:
        return bench_gopls(args)
    if args.steps:
        return bench_steps(args)
    if args.notebooks:
        return bench_notebooks(args)
    return bench_kernels(args)


if __name__ == "__main__":
    sys.exit(main())

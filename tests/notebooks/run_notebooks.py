#!/usr/bin/env python3
"""Execute the workshop notebooks headless in the real GoNB kernel and check them.

Usage (from the repository root, with the venv's python; `make notebooks` does this
with DynamoDB Local started and AWS_ENDPOINT_URL_DYNAMODB exported):

    .venv/bin/python tests/notebooks/run_notebooks.py [NOTEBOOK ...] [options]

Without NOTEBOOK arguments it runs every notebooks/[0-9][0-9]-*.ipynb in order. Each
notebook runs top to bottom in a fresh `gonb` kernel whose working directory is the
notebook's folder (or --cwd), so `${GONB_DIR}/..` is the repository, as in JupyterLab.

A notebook fails when:
  - a cell fails (compile error, panic, non-zero exit: the kernel replies "error"),
  - any output is an error output, or stderr contains "panic",
  - a cell tagged `chart` did not emit both an ECharts chart (text/html with an echarts
    element) and a table of its numbers (markdown/plain/HTML table),
  - a Markdown cell holds a "$" outside a code span that is not written "\\\\$" (JupyterLab
    would typeset the text between two of them as math),
  - an expectation from EXPECTATIONS (below) or --expect is not met.

It prints per-notebook timings (the time of every pass: with --again, the first and
the second), the slowest cells (with -v every cell's wall time beside the CPU seconds of
the kernel, go build and the cell's program included, and of DynamoDB Local and
ElasticMQ: a cell whose wall time far exceeds both waited for the machine or for a
clock), writes them to
tests/artifacts/notebook-timings.json, and ends with "N passed, N failed".
--runs 2 executes the set twice (the second run shows warm-cache timings).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Per-notebook expectations, keyed by the notebook's two-digit prefix (so a renamed
# notebook keeps its checks). "contains": substrings that must appear in the
# notebook's outputs (stdout, text/plain, text/markdown, text/html, all together).
# Notebook authors: add the figures a reader must see.
EXPECTATIONS: dict[str, dict[str, list[str]]] = {
    # 00: preflight, GoNB memorizes declarations but not values, the seed's
    # write units (39 items under 1 KB: one unit each), the sample nights.
    "00": {"contains": ["✓ DynamoDB answers", "✓ table db_batch_window_requests is active",
                        "hello, again - counter is 1", "39 write units",
                        "| 2026-05-13 | 10 | 2 | 0.5 |", "| 2026-05-14 | 12 | 5 | 0.5 |",
                        "the exclusive jobs alone need 355"]},
    # 01: measured read costs (queuekit/access's TestNightReads derives them
    # from the 4 KB rules), DynamoDB refusing a key update, the job_id index
    # doubling the writes, and the poor key's Scan.
    "01": {"contains": ["01:00#JOB-20260513-003", "This attribute is part of the key",
                        "| GetItem × 10, one per job (full key) | 10 | 10 | 10 | 5 |",
                        "| Query batch_date = :d, ConsistentRead | 1 | 10 | 10 | 1 |",
                        "| Query batch_date = :d + filter requires_exclusive_lock = true | 1 | 2 | 10 | 0.5 |",
                        "| with job_id-index, first write | 39 | 2 | 78 | 39 |", "| with job_id-index, same items again | 39 | 2 | 39 | 0 |",
                        "| index job_id-index | Query job_id-index | 1 | 1 | 0.5 |",
                        "both return the same 10 jobs: true",
                        "| poor key: Scan + filter | Scan | 10 | 3,678 |",
                        # an item's size by DynamoDB's rules (names + values; by hand in
                        # catalog's size tests), the untouched index design failing.
                        "JOB-20260513-001: JSON line 278 bytes; DynamoDB item 220 bytes",
                        "✗ not yet: DynamoDB creates your index: error: your index: a GSI needs a partition key"]},
    # 02: the study's year row, an empty Scan page with a next page, writes
    # (2 units per 1.3 KB item, batched or not), the parallel Scan.
    "02": {"contains": ["| 365 | 3,639 | 8 | 8 | 3,639 |", "Query vs Scan: read units consumed",
                        "| 1 | 0 | 836 |", "2 write units per item either way", "Scan, 4 segment(s)",
                        "| 365 | 5 |", "the night's 8 items came back in"]},
    # 03: the lock-counting share (440 of 720, by hand in queuekit's
    # TestDemand...), the engine against Erlang C, Little on the stable night
    # (290/240), the stable night's figures beside Erlang C (derived by hand in
    # queuekit/report's tests), the overloaded night's missing steady state,
    # WhyTheyMiss's no-locks row and Allen-Cunneen.
    "03": {"contains": ["| 2026-05-13 | 3 | 37.5% | 440 of 720 | 61.1% |", "✓ pass: Erlang C inside the simulator's 95% interval",
                        "| 2026-05-13 | 3 | 29 | 1.21 | 1.21 |",
                        "| average wait | 29.00 min | 1.74 min |", "| p95 wait (simulation: 10 jobs, so the longest wait) | 50.00 min | 12.73 min |",
                        "M/M/c has no steady state", "| no exclusive locks | 2.00 | 20.00 |",
                        "G/G/c wait (Allen-Cunneen, approximation: ca = 1.66, cs = 0.32)"]},
    # 04: the reference scenarios (queuekit/sim's TestReferenceScenarios), the
    # lock cost (170 worker-minutes, by hand in the same test), the online
    # rebuild, a summarised histogram, the measured CRN gain and the sweep's answer.
    "04": {"contains": ["2026-05-13, 3 workers: mean wait 29.00 min, p95 50 min",
                        "2026-05-14, 2 workers: mean wait 246.67 min, p95 390 min",
                        "| 2026-05-13 | 3 | barrier | 29 | 50 | 61.1% | 170 | 5 | 0 | 160 |",
                        "measured 19 min", "| p95 (nearest rank) |", "times narrower",
                        "smallest c meeting the target: 3",
                        "of 4,000 nights overflow", "its 5 exclusive jobs need 355 minutes", "exact McNemar test", "P(p95 > 75 min) is at least"]},
    # 08: seed 003's lines against the figures queuekit/capacity's tests derive by
    # hand (10,851 machines by threads, 1,086 by memory, $383 and $110.64 a day),
    # the break-even utilisation, and the hot key measured on DynamoDB Local.
    "08": {"contains": ["| Overall machines need 11,570 machines | 11,570 | 11,570 | 10,851 machines |",
                        "| 1157/64 = 20 machines | 20 | 18.0781 | 1,086 machines |",
                        "fleet: 10,851 machines, bound by threads",
                        "measured on DynamoDB Local: 4 table + 2 index write units a job; the model says 4 + 2",
                        "| 100,000,000 | 383 | 110.64 | 120 | 12 |",
                        "break-even utilisation of provisioned capacity: 28.9%",
                        "4,630 WCU/s = 4.63 × the limit",
                        "busiest holds 1,157 of 1,157 items", "in  5-minute bins: peak factor 19.2, fleet",
                        # the arrival process (pinned regression values of seed 1, ExampleHistoryPeaks_Estimate)
                        "**The history, night by night** (365 nights): median 24, p95 32, max 38.4.",
                        "(1,000 simulated days): median 18.16, p95 18.17, max 18.19",
                        "seed 003's fleet needs **197,211 machines**",
                        # SQS in flight (capacity.SQSQueuesFor, ExampleSQSQueuesFor): 120,000 a standard queue
                        "| 1 | 347,222 | 3 |", "| 18.17 | 6,310,723 | 53 |",
                        "| 64 | 64 |"]},
    # 09: the study's verdict for seed 1 (pinned regression values, see
    # queuekit/forecast's TestStudyVerdict) and the exercise's self-check.
    "09": {"contains": ["| 73 held-out nights | 41.93 | 84.05 | 32.11 |",
                        "| 2026-05-14 | 2 | 624.68 | 678.28 | 490 | 644.03 |",
                        "| oracle (noise floor) |",
                        # the pool decision (forecastlab.NightTarget, ExampleForecastPick): the forecast's pick, 5, is late on 42.4 %
                        "2026-05-04: 8 jobs, 268 estimated minutes, 119 of them exclusive",
                        "| 5 | 232.76 |", "is late on **42.4%** of them [39.4% to 45.5%]",
                        "load world, all held-out nights: regression had the smallest MAE on every one of 10 seeds"]},
    # 10: the shard projection at notebook 08's peak estimate (p95 of the busiest
    # 5-minute bin, pinned by ExampleHistoryPeaks_Estimate): 1,157.41 jobs a second x 4 index
    # writes x 18.17 = 84,143 index write units a second, so 85 partitions of 1,000.
    "10": {"contains": ["| peak factor (p95 of the busiest 5-minute bin) | 18.17 |",
                        "| shards needed at that peak | 85 |"]},
    # 06: counts fixed by the cells' own schedules (five fires; 7 inserts, 1
    # update, 1 user delete ignored; 5 + 6 fire records after the restart; one
    # dead letter); delays vary with Local's sweep and are not pinned.
    "06": {"contains": ["fired 5 of 5; ignored 7 inserts, 1 update, 1 user delete; duplicates 0",
                        "consumer A fired 2, consumer B fired 4; fire records 11 for 11 distinct timers; duplicates 0",
                        "fired 2, dead-lettered 1; the dead-letter queue holds 1 message",
                        "| 30 | 30 |", "The 30 timers fired in **", "a Scan returns", "filtered on `due > now`, **3**"]},
    # 07: the failing slices 3 and 17 end in the DLQ, the redrive completes
    # the run, a 3 s slice keeps its message, one paced worker loses nothing.
    "07": {"contains": ["all 30 slices processed", "dead-lettered slices 3, 17; the queues stay for a redrive",
                        "after redrive: 30 of 30 processed, dead-lettered slices: none",
                        "3 slices, 3 receives, 0 redelivered", " | 12 | 0 | 0 | 12 |",
                        # the FIFO run (SQS rules: a group in flight yields nothing; a duplicate is dropped)
                        "the copy of A1 was dropped. 3 of 4 messages delivered",
                        # one receive of up to 10 hands a group over together (FIFO delivery logic)
                        "One receive of up to 10 got **A1, A2, A3**", "runs 3 jobs of one group **side by side**"]},
    # 05: the executor for real (queuekit/lease's tests): one winner of a race,
    # every job once, the rules held on the recorded schedule, the forecast
    # column (sim's reference figures), kill -9 re-claimed after the lease with
    # one retry, the dead letter after 1 + max_retry = 4 attempts, and the
    # overloaded night's forecast. Realised figures vary run to run.
    "05": {"contains": ["won: 1 of 2", "✓ pass: every job ended once: one SUCCESS per job", "the work inside a job runs at least once",
                        "✓ pool rules hold on the recorded schedule",
                        "| average wait (min) | 29 |", "| queue drained (minute) | 160 |",
                        "worker process ended: signal: killed", "LEASE_EXPIRED",
                        "jobs ended SUCCESS: 10 of 10; retries counted: 0; lost attempts: 1",
                        "dead letter: JOB-20260513-006 after 4 attempts",
                        "statuses: 9 SUCCESS, 1 FATAL_FAILURE; retries 3",
                        "jobs after the cutoff: forecast 9,"]},
}

# 08's limits-layer section (issue 24): what does not depend on the machine's
# speed (S, the partition's limit divided by S, the offered multiple, the
# shards needed) and the throttling reason the layer answers with.
EXPECTATIONS["08"]["contains"] += [
    "At S = 100 one partition takes 10 write units a second (1,000 / S); the cell offered 30 writes a second to one key, 3 times that.",
    "`TableWriteKeyRangeThroughputExceeded`:",
    "Writes a second against the shard count (limits divided by S = 100)",
    "The shards needed are offered ÷ limit rounded up = **3**, whatever S is",
]
# 05, issue 15: the sleeping worker's late end is refused by its fencing
# condition, and the pool counts the job's end once.
# Which write of the sleeper the fence refuses (its end, or a heartbeat that
# makes it drop the job) depends on where in its heartbeat cycle it froze;
# the sentence under the table names it (leaselab.SleeperSummary's tests).
EXPECTATIONS["05"]["contains"] += ["Ends the pool counted for the job: **1**", "the job is **SUCCESS**"]
# 05, issue 25: the sleeper's late result is refused by the result store, which
# holds the rescuer's (the sleeper stays stopped until that result is stored).
EXPECTATIONS["05"]["contains"] += ["| refused by the store | sleeper | 1 |", "| held by the store (read back) | rescuer | 2 |"]
# 05's pool ceiling on the limits layer (issue 24): S, the key's limit divided
# by S, and the reason the layer throttles the night's one partition key with.
EXPECTATIONS["05"]["contains"] += [
    "At S = 50 the night's one key takes 20 write units a second.",
    "`TableWriteKeyRangeThroughputExceeded`:",
]
# 05, issue 36: a claim's reply lost after it landed (the in-process proxy)
# leaves one attempt a job, counted as won; workers two leases ahead and
# behind take over no healthy lease (lab's Example tests derive both).
EXPECTATIONS["05"]["contains"] += [
    "| dropped by the proxy |", "The table holds **3 attempts** for **3 jobs** (one each)", "and 0 lost, and every job is SUCCESS (3).",
    "| removed by the proxy | 400 TransactionCanceledException |", "so it counted the claim as won, not as a lost race.",
    "These reapers took over **0 leases**", "The run's verdict on the table's own orders (fence tokens, pool versions) holds.",
    "your prediction of worst detection time: by the rule 2 minutes",
]
# 10's shard-count section on the limits layer (issue 24): the real fleet at
# S = 50 (a partition's 1,000 write units divided by S), and seed 003's peak
# on a new on-demand table (4,000 write units: 4 partitions) and on one
# warmed to the 40,000 quota (40 partitions).
EXPECTATIONS.setdefault("10", {}).setdefault("contains", [])
EXPECTATIONS["10"]["contains"] += [
    "At S = 50 one index partition takes 20 write units a second.",
    "jobs/s (S = 50)",
    "A new on-demand table (4 partitions in the layer)",
    "A table warmed to 40,000 (40 partitions in the layer)",
]
# 10, issue 33: the one tier's rows at seed 003's size (fleetplan, derived by
# hand in its tests and docs/design/fleet.md), the dispatchers throttling
# nothing where the one tier's 64 workers throttle (fleetplan's limits test),
# the takeover shown on a shard the killed worker owned, and the exercises'
# skeletons marked not yet (their right answers: lab's tests).
EXPECTATIONS["10"]["contains"] += [
    "pk = SHARD is read at **1,468,502 units a second, 489.5x one partition's 3,000**",
    "pk = MEMBER written at 7,234, 7.2x one partition's 1,000",
    "36.7x its 40,000 quota",
    "**two tiers, 2 dispatchers**: pk = SHARD's partition throttled **0** requests (none), pk = MEMBER's **0** (none); the table **0** in all.",
    "(bob owned it before the kill)", "bob's lease on it ended.",
    "of the pool's ceiling of",
    "✗ not yet: a split of the roles: one-tier or two-tier",
    "Your design does not hold yet",
    "✗ not yet: the due index's warm throughput covers its own writes at 80 %",
]

# A chart cell's HTML must hold an element ECharts draws into and the init call.
ECHARTS_HTML = re.compile(r"echarts\.init\(", re.S)
ECHARTS_DIV = re.compile(r"<div[^>]*\bid=[\"'][^\"']+[\"']", re.S)
# A table: markdown (a |---| separator row), HTML <table>, or an aligned plain-text
# table (a header underlined with dashes, or tab/space-aligned rows).
MD_TABLE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)
HTML_TABLE = re.compile(r"<table\b", re.I)
PLAIN_TABLE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$", re.M)


@dataclass
class CellTiming:
    notebook: str
    index: int
    seconds: float
    first_line: str
    cpu: float | None = None  # CPU seconds of the kernel and what it ran (go build, the cell)
    server_cpu: float | None = None  # CPU seconds of DynamoDB Local and ElasticMQ


@dataclass
class Result:
    notebook: str
    seconds: float = 0.0  # the first pass (cell timings are the first pass's)
    passes: list[float] = field(default_factory=list)  # every pass, --again included
    cells: list[CellTiming] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures


def jupyter_env() -> None:
    """Take the environment JupyterLab gets from scripts/env.sh (Jupyter's files in
    the venv, the venv's tools on PATH, local AWS credentials, the module-cache
    GOPROXY), so headless runs build cells exactly as the workshop does."""
    out = subprocess.run(["bash", "-c", 'source "$1" && env -0', "env.sh", str(ROOT / "scripts" / "env.sh")],
                         check=True, capture_output=True).stdout
    for item in out.split(b"\0"):
        key, sep, value = item.decode().partition("=")
        if sep:
            os.environ[key] = value


# A backslash escape of an ASCII punctuation character (CommonMark); a dollar
# is written with two backslashes for MathJax (see queuekit/format).
MD_DOLLAR = re.compile(r"\\\\\$")
MD_ESCAPE = re.compile(r"\\([!-/:-@\[-`{-~])")


def markdown_text(md: str) -> str:
    """Markdown written by queuekit/format with its escapes undone."""
    return MD_ESCAPE.sub(r"\1", MD_DOLLAR.sub("$", md))


def output_texts(cell) -> tuple[list[str], list[str], list[str]]:
    """Returns (all texts, html texts, stderr texts) of a code cell's outputs."""
    texts, html, stderr = [], [], []
    for out in cell.get("outputs", []):
        kind = out.get("output_type")
        if kind == "stream":
            text = out.get("text", "")
            texts.append(text)
            if out.get("name") == "stderr":
                stderr.append(text)
        elif kind in ("display_data", "execute_result", "update_display_data"):
            data = out.get("data", {})
            for mime in ("text/plain", "text/markdown", "text/html"):
                if mime in data:
                    val = data[mime]
                    val = "".join(val) if isinstance(val, list) else str(val)
                    texts.append(val)
                    if mime == "text/markdown":
                        # What the reader sees: queuekit/format escapes every
                        # Markdown-active character, so expectations are
                        # written as rendered text ("LEASE_EXPIRED").
                        texts.append(markdown_text(val))
                    if mime == "text/html":
                        html.append(val)
        elif kind == "error":
            texts.append("\n".join(out.get("traceback", [])))
    return texts, html, stderr


def check_cell(nbname: str, idx: int, cell) -> list[str]:
    problems = []
    texts, html, stderr = output_texts(cell)
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            problems.append(f"{nbname} cell {idx}: error output {out.get('ename')}: "
                            f"{strip_ansi(out.get('evalue', ''))[:300]}")
    for text in stderr:
        if "panic" in text:
            problems.append(f"{nbname} cell {idx}: stderr mentions a panic: {text.strip()[:300]}")
    tags = cell.get("metadata", {}).get("tags", [])
    if "chart" in tags:
        if not any(ECHARTS_HTML.search(h) and ECHARTS_DIV.search(h) for h in html):
            problems.append(f"{nbname} cell {idx} (tag chart): no HTML output with an ECharts "
                            "element and echarts.init(...)")
        non_chart = [t for t in texts if not ECHARTS_HTML.search(t)]
        if not any(MD_TABLE.search(t) or HTML_TABLE.search(t) or PLAIN_TABLE.search(t)
                   for t in non_chart):
            problems.append(f"{nbname} cell {idx} (tag chart): no table of the chart's numbers "
                            "(markdown, HTML or dashed plain-text table)")
    return problems


# JupyterLab typesets text between two "$" as LaTeX, in Markdown cells and in
# Markdown outputs alike. One backslash, \$, does not escape it: the Markdown
# renderer turns it into a bare "$" before MathJax scans the page, so two of them
# in a paragraph still make a formula. Two backslashes, \\$, do: the page then
# holds \$, which MathJax shows as a dollar (checked in JupyterLab by
# tests/browser). Markdown cells must write a dollar as \\$ (code spans in
# backticks are left alone); outputs go through queuekit/format, which does the same.
CODE_SPAN = re.compile(r"`[^`]*`")
BARE_DOLLAR = re.compile(r"(?<!\\\\)\$")


def check_markdown_cell(nbname: str, idx: int, cell) -> list[str]:
    text = CODE_SPAN.sub("", "".join(cell.get("source", "")))
    bad = [ln.strip() for ln in text.splitlines() if BARE_DOLLAR.search(ln)]
    return [f"{nbname} markdown cell {idx}: unescaped $ (JupyterLab typesets $...$ as math; write it as two backslashes and a dollar): {ln[:120]}"
            for ln in bad]


def cpu_seconds(pid: int | None, children: bool = True) -> float | None:
    """CPU seconds of a process (user + system), with its waited-for children's
    when children is true (GoNB waits for go build and the cell's program, so a
    kernel's count covers both). None when the process cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError, TypeError):
        return None
    ticks = [int(x) for x in fields[11:15]]  # utime, stime, cutime, cstime
    return sum(ticks if children else ticks[:2]) / os.sysconf("SC_CLK_TCK")


def server_pids() -> list[int]:
    """The pids of the DynamoDB Local and ElasticMQ JVMs that `queuekit servers`
    runs for this run (their supervisors' .jvm files under .cache), if any:
    ElasticMQ's only while it runs (it starts at the first SQS request)."""
    pids = []
    for env, name in (("AWS_ENDPOINT_URL_DYNAMODB", "dynamodb-local"), ("AWS_ENDPOINT_URL_SQS", "elasticmq")):
        port = os.environ.get(env, "").rstrip("/").rpartition(":")[2]
        try:
            pids.append(int((ROOT / ".cache" / name / "run" / f"{name}-{port}.jvm").read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    return pids


def cpu_now(kernel_pid: int | None, servers: list[int]) -> tuple[float | None, float | None]:
    parts = [cpu_seconds(p, children=False) for p in servers]
    known = [x for x in parts if x is not None]
    return cpu_seconds(kernel_pid), (sum(known) if known else None)


def strip_ansi(s: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*m", "", s)


def run_notebook(path: Path, args) -> Result:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    name = path.name
    res = Result(name)
    nb = nbformat.read(path, as_version=4)
    cwd = Path(args.cwd).resolve() if args.cwd else path.parent.resolve()
    client = NotebookClient(nb, kernel_name=args.kernel, timeout=args.timeout,
                            startup_timeout=120, allow_errors=False,
                            resources={"metadata": {"path": str(cwd)}})
    log_dir = Path(args.timings).parent if args.timings else ROOT / "tests" / "artifacts"
    log_dir.mkdir(parents=True, exist_ok=True)
    # The kernel's own log (GoNB logs every step to stderr) goes to a file, not the test output.
    kernel_log = open(log_dir / f"kernel-{path.stem}.log", "wb")
    started = time.monotonic()
    idx = -1
    try:
        with client.setup_kernel(stderr=kernel_log, stdout=kernel_log):
            # With --again every cell runs a second time in the same kernel, as a
            # reader re-running the notebook without a restart; the checks below
            # then look at the second run's outputs. Timings are the first run's.
            kernel_pid = getattr(client.km.provisioner, "pid", None) if client.km else None
            servers = server_pids()
            for again in range(2 if args.again and runs_twice(name) else 1):
                pass_started = time.monotonic()
                for idx, cell in enumerate(nb.cells):
                    if cell.cell_type != "code":
                        continue
                    t0 = time.monotonic()
                    cpu0, srv0 = cpu_now(kernel_pid, servers)
                    try:
                        client.execute_cell(cell, idx)
                    finally:
                        if not again:
                            first = next((ln for ln in cell.source.splitlines() if ln.strip()), "")
                            cpu1, srv1 = cpu_now(kernel_pid, servers)
                            c = CellTiming(name, idx, time.monotonic() - t0, first[:70],
                                           None if None in (cpu0, cpu1) else round(cpu1 - cpu0, 2),
                                           None if None in (srv0, srv1) else round(srv1 - srv0, 2))
                            res.cells.append(c)
                            if args.verbose:
                                cpu = "" if c.cpu is None else f" cpu {c.cpu:6.2f}s"
                                cpu += "" if c.server_cpu is None else f" servers {c.server_cpu:6.2f}s"
                                print(f"    cell {idx:2d} {c.seconds:7.2f}s{cpu}  {first[:60]}", flush=True)
                res.passes.append(time.monotonic() - pass_started)
                if not again:
                    res.seconds = time.monotonic() - started
    except CellExecutionError as e:
        res.failures.append(f"{name}: cell {idx} failed: {strip_ansi(str(e))[-1500:]}")
    except (CellTimeoutError, DeadKernelError, TimeoutError) as e:
        res.failures.append(f"{name}: cell {idx}: {type(e).__name__}: {e}")
    finally:
        kernel_log.close()
    if not res.seconds:
        res.seconds = time.monotonic() - started

    all_text = []
    for idx, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            res.failures.extend(check_markdown_cell(name, idx, cell))
        if cell.cell_type != "code":
            continue
        res.failures.extend(check_cell(name, idx, cell))
        all_text.extend(output_texts(cell)[0])
    joined = "\n".join(all_text)
    exp = dict(EXPECTATIONS.get(name[:2], {}))
    wanted = list(exp.get("contains", [])) + list(args.expect or [])
    for s in wanted:
        if s not in joined:
            res.failures.append(f"{name}: outputs do not contain {s!r}")
    if args.save_dir:
        out = Path(args.save_dir) / name
        out.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, out)
    return res


# --again: the notebooks run a second time in the same kernel are those that
# change something outside it (tables, queues, files), so that the second pass
# meets what the first left, as a reader re-running the notebook does. These
# only read (03, 04: the sample nights in DynamoDB) or only compute (09): their
# second pass would run the same programs on the same data.
RUNS_ONCE = {"03", "04", "09"}


def runs_twice(name: str) -> bool:
    return name[:2] not in RUNS_ONCE


# --jobs N: notebooks FIRST (00 creates and seeds the catalog the others read)
# run alone, then the rest N at a time, each in a process and kernel of its own,
# the longest first. They can share the servers: each notebook's tables and
# queues are its own (01's schema_*, 02's qvs_*, 05's *_exec, 06's
# workshop_timers_06, 07's workshop_fanout_07, 08's hot_*, 10's *_fleet and
# cp_*), and the catalog they share is only read after 00 (a CreateTable or Seed
# of it, as 01's first cell does, writes the same items again). EXPECTED is
# the order's hint only: seconds of both passes, measured 2026-11-29 on 2 cores.
FIRST = ("00",)
EXPECTED = {"05": 180, "10": 166, "07": 108, "06": 104, "08": 77, "02": 18, "01": 17, "04": 13, "03": 10, "09": 8}


def report(r: Result) -> None:
    print(f"-- {r.notebook}", flush=True)
    slow = max(r.cells, key=lambda c: c.seconds, default=None)
    slow_s = f"slowest cell {slow.index} {slow.seconds:.1f}s ({slow.first_line})" if slow else ""
    passes = ", ".join(f"pass {i + 1} {s:.1f}s" for i, s in enumerate(r.passes)) or "no pass completed"
    print(f"   {'ok  ' if r.ok else 'FAIL'} {r.seconds:6.1f}s  ({passes})  {len(r.cells)} cells  {slow_s}",
          flush=True)
    for f in r.failures:
        print(f"   - {f}", flush=True)


def run_all(paths: list[Path], args) -> list[Result]:
    """Runs every notebook (see --jobs) and returns their results in the order given."""
    if args.jobs <= 1:
        results = []
        for p in paths:
            r = run_notebook(p, args)
            report(r)
            results.append(r)
        return results
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    done: dict[str, Result] = {}
    first = [p for p in paths if p.name[:2] in FIRST]
    rest = sorted((p for p in paths if p.name[:2] not in FIRST), key=lambda p: -EXPECTED.get(p.name[:2], 60))
    for p in first:
        done[p.name] = run_notebook(p, args)
        report(done[p.name])
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {pool.submit(run_notebook, p, args): p for p in rest}
        for fut in as_completed(futures):
            p = futures[fut]
            try:
                r = fut.result()
            except Exception as e:  # a worker that died: the notebook fails, the others go on
                r = Result(p.name, failures=[f"{p.name}: the run's process failed: {type(e).__name__}: {e}"])
            done[p.name] = r
            report(r)
    return [done[p.name] for p in paths]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks to run (default: "
                    "notebooks/[0-9][0-9]-*.ipynb)")
    ap.add_argument("--kernel", default="gonb")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    ap.add_argument("--cwd", help="kernel working directory (default: the notebook's folder)")
    ap.add_argument("--expect", action="append",
                    help="substring every given notebook's outputs must contain (repeatable)")
    ap.add_argument("--runs", type=int, default=1, help="execute the set this many times")
    ap.add_argument("--again", action="store_true",
                    help="run every notebook that changes something outside the kernel a second time in the same "
                         "kernel (re-runnable without a restart; see RUNS_ONCE)")
    ap.add_argument("--jobs", type=int, default=1,
                    help="run this many notebooks at a time, after 00 (see FIRST), each in its own kernel")
    ap.add_argument("--save-dir", help="write executed notebooks here (default: not written)")
    ap.add_argument("--timings", default=str(ROOT / "tests" / "artifacts" / "notebook-timings.json"))
    ap.add_argument("-v", "--verbose", action="store_true", help="print every cell's time")
    args = ap.parse_args()

    jupyter_env()
    paths = [Path(p) for p in args.notebooks] or \
        [Path(p) for p in sorted(glob.glob(str(ROOT / "notebooks" / "[0-9][0-9]-*.ipynb")))]
    if not paths:
        print("run_notebooks: no notebooks match notebooks/[0-9][0-9]-*.ipynb", file=sys.stderr)
        print("0 passed, 1 failed")
        return 1
    if not os.environ.get("AWS_ENDPOINT_URL_DYNAMODB"):
        print("run_notebooks: AWS_ENDPOINT_URL_DYNAMODB is not set; notebooks that use DynamoDB "
              "will fail. Use `make notebooks`, or `make dynamodb` and export it.",
              file=sys.stderr)
    if not os.environ.get("AWS_ENDPOINT_URL_SQS"):
        print("run_notebooks: AWS_ENDPOINT_URL_SQS is not set; notebooks 06 and 07 will fail. "
              "Start it with `make sqs` and export "
              "AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9324 (make test does both).", file=sys.stderr)

    if args.again:
        once = [p.name for p in paths if not runs_twice(p.name)]
        if once:
            print(f"run_notebooks: --again runs {', '.join(once)} once: they change nothing outside the kernel "
                  "(no table, queue or file), so a second pass would run the same programs on the same data", flush=True)
    runs = []
    for run in range(1, args.runs + 1):
        print(f"== run {run}/{args.runs}: {len(paths)} notebook(s), kernel {args.kernel}"
              + (f", {args.jobs} at a time after {', '.join(FIRST)}" if args.jobs > 1 else ""), flush=True)
        run_started = time.monotonic()
        results = run_all(paths, args)
        wall = time.monotonic() - run_started
        total = sum(r.seconds for r in results)
        per_pass = [sum(r.passes[i] for r in results if len(r.passes) > i) for i in range(max((len(r.passes) for r in results), default=0))]
        passes = ", ".join(f"pass {i + 1} {s:.1f}s" for i, s in enumerate(per_pass))
        cells = sorted((c for r in results for c in r.cells), key=lambda c: -c.seconds)
        print(f"== run {run}: {wall:.1f}s of wall time; the notebooks' own: {sum(per_pass):.1f}s ({passes}); "
              f"first pass {total:.1f}s with kernel starts; slowest cells (first pass):")
        for c in cells[:5]:
            print(f"   {c.seconds:6.1f}s  {c.notebook} cell {c.index}: {c.first_line}")
        runs.append({"run": run, "wall_seconds": round(wall, 2), "total_seconds": round(total, 2), "passes_seconds": [round(x, 2) for x in per_pass], "notebooks": [
            {"notebook": r.notebook, "seconds": round(r.seconds, 2), "passes_seconds": [round(x, 2) for x in r.passes], "ok": r.ok,
             "failures": r.failures,
             "cells": [{"index": c.index, "seconds": round(c.seconds, 2), "cpu_seconds": c.cpu,
                        "server_cpu_seconds": c.server_cpu, "first_line": c.first_line}
                       for c in r.cells]} for r in results]})

    if args.timings:
        Path(args.timings).parent.mkdir(parents=True, exist_ok=True)
        Path(args.timings).write_text(json.dumps(runs, indent=1) + "\n")
    # make test's stage timer (scripts/test-stages.sh) names the slowest cells
    # of a stage over its budget: one "SECONDS<TAB>WHAT" line per cell.
    if os.environ.get("STAGE_TIMES"):
        with open(os.environ["STAGE_TIMES"], "a") as f:
            for r in runs:
                for n in r["notebooks"]:
                    for c in n["cells"]:
                        f.write(f"{c['seconds']:.2f}\t{n['notebook']} cell {c['index']}\n")
    passed = sum(1 for r in runs for n in r["notebooks"] if n["ok"])
    failed = sum(1 for r in runs for n in r["notebooks"] if not n["ok"])
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

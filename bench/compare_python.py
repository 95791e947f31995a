#!/usr/bin/env python3
"""Compare queuekit's simulators with the Python tools people would otherwise use.

Run from the repository root (`make bench` does it):

    python3 bench/compare_python.py [--customers N] [--replications R]

1. Steady-state M/M/3 (lambda=2, mu=1) with Ciw, the Python discrete-event
   library, against `queuekit mmc --simulate`: events per second of each and
   their ratio, and both Wq estimates beside Erlang C (0.444444).
2. Monte Carlo of the stable night (2026-05-13, 3 workers, lognormal runtimes,
   CV 0.5) with a plain-Python port of SPEC.md's barrier rules against
   `queuekit simulate --replications`: replications per second and the ratio.

Both sides run here, in this one process's lifetime, on the same machine, so
the printed ratios are comparable; absolute figures vary with load.
"""
import argparse
import heapq
import json
import math
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def queuekit(*args):
    exe = ROOT / ".cache" / "bench" / "queuekit"
    exe.parent.mkdir(parents=True, exist_ok=True)
    # Always rebuild (a no-op when nothing changed) so a stale binary is never timed.
    subprocess.run(["go", "build", "-o", str(exe), "./queuekit/cmd/queuekit"], cwd=ROOT, check=True)
    t0 = time.perf_counter()
    out = subprocess.run([str(exe), *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return json.loads(out), time.perf_counter() - t0


def ciw_mmc(customers, seed=1):
    import ciw
    ciw.seed(seed)
    net = ciw.create_network(arrival_distributions=[ciw.dists.Exponential(2.0)],
                             service_distributions=[ciw.dists.Exponential(1.0)],
                             number_of_servers=[3])
    sim = ciw.Simulation(net)
    t0 = time.perf_counter()
    sim.simulate_until_max_customers(customers, method="Finish")
    dt = time.perf_counter() - t0
    recs = sim.get_all_records()
    waits = [r.waiting_time for r in recs[len(recs) // 10:]]
    return sum(waits) / len(waits), 2 * customers / dt, dt


def night_jobs():
    jobs = []
    for line in (ROOT / "data" / "sample_nights.jsonl").read_text().splitlines():
        j = json.loads(line)
        if j["batch_date"] == "2026-05-13":
            h, m = map(int, j["requested_window"].split(":"))
            jobs.append((j["job_id"], max(0, h * 60 + m - 60), j["estimated_runtime_minutes"], j["priority"],
                         j["requires_exclusive_lock"]))
    return jobs


def barrier_night(jobs, runtimes, c, cutoff=240.0):
    """SPEC.md's barrier rules, in plain Python: returns (p95 wait, drained > cutoff)."""
    arrivals = sorted(range(len(jobs)), key=lambda i: jobs[i][1])
    waiting, running, waits = [], [], []
    busy, excl, nxt, now, done = 0, False, 0, 0.0, 0
    while done < len(jobs):
        cand = [jobs[arrivals[nxt]][1]] if nxt < len(arrivals) else []
        if running:
            cand.append(running[0][0])
        now = min(cand)
        while running and running[0][0] <= now:
            f, i, w = heapq.heappop(running)
            busy -= w
            done += 1
            excl = excl and not jobs[i][4]
            drained = f
        while nxt < len(arrivals) and jobs[arrivals[nxt]][1] <= now:
            waiting.append(arrivals[nxt])
            nxt += 1
        waiting.sort(key=lambda i: (-jobs[i][3], jobs[i][1], jobs[i][0]))
        while busy < c and not excl and waiting:
            ex = next((k for k, i in enumerate(waiting) if jobs[i][4]), None)
            if ex is None:
                i, w = waiting.pop(0), 1
            elif not running:
                i, w = waiting.pop(ex), c
                excl = True
            else:
                break
            waits.append(now - jobs[i][1])
            busy += w
            heapq.heappush(running, (now + runtimes[i], i, w))
    waits.sort()
    return waits[math.ceil(0.95 * len(waits)) - 1], drained > cutoff


def python_night_mc(replications, cv=0.5, seed=1):
    jobs = night_jobs()
    rng = random.Random(seed)
    s2 = math.log1p(cv * cv)
    t0 = time.perf_counter()
    over = 0
    for _ in range(replications):
        rts = [rng.lognormvariate(math.log(j[2]) - s2 / 2, math.sqrt(s2)) for j in jobs]
        _, o = barrier_night(jobs, rts, 3)
        over += o
    dt = time.perf_counter() - t0
    return over / replications, replications / dt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--customers", type=int, default=100_000)
    ap.add_argument("--replications", type=int, default=10_000)
    a = ap.parse_args()

    print(f"1) Steady-state M/M/3, lambda=2, mu=1, {a.customers} customers (Erlang C Wq = 0.444444)")
    try:
        wq, ciw_eps, ciw_s = ciw_mmc(a.customers)
        print(f"   Ciw:      Wq {wq:.4f}   {ciw_eps / 1e6:8.3f} M events/s   ({ciw_s:.2f} s)")
    except ImportError:
        print("   Ciw is not installed: pip install -r bench/requirements.txt", file=sys.stderr)
        ciw_eps = None
    q, _ = queuekit("mmc", "--lambda", "2", "--mu", "1", "--workers", "3", "--simulate",
                    "--customers", str(a.customers), "--json")
    qk_eps = q["simulated"]["events_per_second"]
    print(f"   queuekit: Wq {q['simulated']['wq']:.4f}   {qk_eps / 1e6:8.3f} M events/s")
    if ciw_eps:
        print(f"   ratio queuekit/Ciw: {qk_eps / ciw_eps:.0f}x")

    print(f"2) Monte Carlo of 2026-05-13 with 3 workers, lognormal CV 0.5, {a.replications} replications")
    p_over, py_rps = python_night_mc(a.replications)
    print(f"   plain Python barrier port: P(overflow) {p_over:.4f}   {py_rps:10.0f} replications/s")
    s, secs = queuekit("simulate", "--batch-date", "2026-05-13", "--workers", "3", "--runtime-cv", "0.5",
                       "--replications", str(a.replications), "--json")
    qk_rps = a.replications / secs
    print(f"   queuekit (whole process):  P(overflow) {s['overflow_probability']['estimate']:.4f}   {qk_rps:10.0f} replications/s")
    print(f"   ratio queuekit/Python: {qk_rps / py_rps:.0f}x")


if __name__ == "__main__":
    main()

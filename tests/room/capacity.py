"""The room's capacity, measured (make room-capacity runs this through
tests/room/run.sh with ROOM_TEST_SCRIPT set: as root, with DOCKER_HOST at its
own dockerd, with the hub's venv).

It starts scripts/room.sh from the checkout, signs the instructor in through
the hub's login form, and then, for each N in ROOM_CAPACITY_NS (default
"1 2 4 6"):

  1. creates N new participants with the admin token (POST /hub/api/users/NAME)
     and starts their servers at once (POST /hub/api/users/NAME/server): the
     spawn time of each, and the CPU seconds its container used to get there
  2. runs, in every server at once, the notebooks of the step through the
     server's kernel API (a new gonb kernel per notebook, every code cell in
     order, over the kernel websocket behind the hub's proxy): for each cell
     the latency (execute_request sent to execute_reply received), the CPU
     seconds the participant's container used meanwhile (its cgroup's CPU
     counter read before and after) and its peak memory (the cgroup's memory
     use, sampled every 0.25 s; the container's whole peak from the cgroup),
     and the cores the host's other work left free meanwhile (free_cores: the
     host's busy CPU time from /proc/stat minus all the step's participants'
     containers' CPU time, read before and after the cell; freecores.py)
  3. stops the N servers (their containers are removed) before the next N

ROOM_CAPACITY_SWEEP holds groups of notebooks separated by "/" (default
session one, 00-04, then session two, 05-10): every N runs the first group,
then every N the next; a group's N = 1 step is one participant's demand for
its notebooks, and roomcap checks the group's other steps against it. Then
one more participant, alone, runs the notebooks of ROOM_CAPACITY_SOLO
(default all) no group ran: those of session two, then in a new server
those of session one. The host's CPU use outside the participants'
containers (other programs, the hub, this driver) is taken from /proc/stat
during each step, and the load average at its start and end.

Writes tests/artifacts/room/capacity.json; queuekit/cmd/roomcap reads it.
"""

import glob
import json
import os
import shutil
import sys
import tempfile
import threading
import time

import requests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import freecores  # noqa: E402
import roomlib  # noqa: E402
from roomlib import auth, docker, free_block, room_env  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ART = os.path.join(ROOT, "tests", "artifacts", "room")
os.makedirs(ART, exist_ok=True)
OUT = os.environ.get("ROOM_CAPACITY_OUT", os.path.join(ART, "capacity.json"))
SESSION_ONE = ["00-welcome", "01-schema-design", "02-query-vs-scan", "03-queueing-parameters", "04-simulation"]
SESSION_TWO = ["05-run-the-night", "06-timers-ttl-streams", "07-fan-out-with-sqs", "08-capacity-and-cost",
               "09-when-ml-helps", "10-a-fleet-for-100-million-jobs"]


def say(msg):
    print(f"room-capacity: {msg}", file=sys.stderr, flush=True)


def die(msg, status=2):
    say(msg)
    sys.exit(status)


def notebooks_of(spec, what):
    """'00 01 02' (or full names) -> notebook file names; a number that names no notebook is an error."""
    have = sorted(os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "notebooks", "[0-9][0-9]-*.ipynb")))
    out = []
    for tok in spec.split():
        hit = [h for h in have if h.startswith(tok)]
        if len(hit) != 1:
            die(f"{what}: {tok!r} names {len(hit)} notebooks in notebooks/ (want exactly one, e.g. 00 or 04-simulation)")
        out.append(hit[0])
    return out


def ints_of(spec, what):
    try:
        ns = [int(x) for x in spec.split()]
    except ValueError:
        die(f"{what}={spec!r}: want whole numbers of participants separated by spaces, e.g. \"1 2 4 6\"")
    if not ns or any(n < 1 or n > 60 for n in ns) or ns[0] != 1:
        die(f"{what}={spec!r}: want 1 first (one participant's demand), then numbers from 2 to 60")
    return ns


try:
    MAX_MINUTES = float(os.environ.get("ROOM_CAPACITY_MAX_MINUTES", "0"))
except ValueError:
    die(f"ROOM_CAPACITY_MAX_MINUTES={os.environ['ROOM_CAPACITY_MAX_MINUTES']!r}: want minutes (0: no limit)")
T_START = time.time()


def past_limit():
    """ROOM_CAPACITY_MAX_MINUTES after the start: no new step, no new notebook."""
    return MAX_MINUTES > 0 and time.time() - T_START > MAX_MINUTES * 60


NS = ints_of(os.environ.get("ROOM_CAPACITY_NS", "1 2 4 6"), "ROOM_CAPACITY_NS")
SOLO = notebooks_of(os.environ.get("ROOM_CAPACITY_SOLO", " ".join(SESSION_ONE + SESSION_TWO)), "ROOM_CAPACITY_SOLO")
# Groups separated by "/": each runs its own N steps, its N = 1 step being
# one participant's demand for those notebooks, and is checked against it.
SWEEPS = [notebooks_of(g, "ROOM_CAPACITY_SWEEP")
          for g in os.environ.get("ROOM_CAPACITY_SWEEP", " ".join(SESSION_ONE) + " / " + " ".join(SESSION_TWO)).split("/") if g.strip()]
SWEEP = [nb for g in SWEEPS for nb in g]
if any(nb not in SOLO for nb in SWEEP):
    die("ROOM_CAPACITY_SWEEP names a notebook ROOM_CAPACITY_SOLO does not: the model needs its solo demand")
if len(set(SWEEP)) != len(SWEEP):
    die("ROOM_CAPACITY_SWEEP names a notebook in two groups: one participant's demand for it would count twice")


def room_port():
    """ROOM_CAPACITY_PORT, or the first of four free ports (proxy, proxy API, hub, board)."""
    want = os.environ.get("ROOM_CAPACITY_PORT")
    if want:
        if not want.isdigit():
            die(f"ROOM_CAPACITY_PORT={want!r} is not a port number")
        return int(want)
    return free_block(4)


PORT = room_port()
STATE = tempfile.mkdtemp(prefix="room-capacity-state-")
NETWORK = "nightqueue-room-capacity"
ENV = room_env(PORT, STATE, NETWORK, ROOM_BIND_IP="127.0.0.1")
# ROOM_CAPACITY_SKIP_BUILD=1: the images as they are (room.sh's ROOM_SKIP_BUILD;
# run.sh clears that one), e.g. when make test-room just built them.
if os.environ.get("ROOM_CAPACITY_SKIP_BUILD") == "1":
    ENV["ROOM_SKIP_BUILD"] = "1"
BASE = f"http://127.0.0.1:{PORT}"
ROOM_LOG = os.path.join(ART, "capacity-room.log")


def admin_token():
    s = requests.Session()
    s.get(f"{BASE}/hub/login", timeout=30)
    xsrf = s.cookies.get("_xsrf", path="/hub/")
    r = s.post(f"{BASE}/hub/login", data={"username": "instructor", "password": ENV["ROOM_ADMIN_CODE"], "_xsrf": xsrf},
               allow_redirects=False, timeout=60)
    if r.status_code != 302:
        raise RuntimeError(f"the instructor's sign-in answered HTTP {r.status_code}")
    r = s.post(f"{BASE}/hub/api/users/instructor/tokens", json={"note": "room capacity", "expires_in": 14400},
               headers={"X-XSRFToken": s.cookies.get("_xsrf", path="/hub/") or ""}, timeout=60)
    r.raise_for_status()
    return r.json()["token"]


# ---- the participant's container, from the host: cgroup v1 or v2
class Cgroup:
    def __init__(self, name):
        cid = docker("inspect", "-f", "{{.Id}}", f"nightqueue-room-{name}").stdout.strip()
        self.cpu = self.mem = self.peak = None
        for pat in (f"/sys/fs/cgroup/cpuacct/**/{cid}/cpuacct.usage", f"/sys/fs/cgroup/cpu,cpuacct/**/{cid}/cpuacct.usage"):
            hits = glob.glob(pat, recursive=True)
            if hits:
                self.cpu, self.v2 = hits[0], False
                break
        if self.cpu is None:
            hits = glob.glob(f"/sys/fs/cgroup/**/*{cid}*/cpu.stat", recursive=True)
            if not hits:
                raise RuntimeError(f"no CPU cgroup file for container {cid[:12]}")
            self.cpu, self.v2 = hits[0], True
        d = os.path.dirname(self.cpu)
        if self.v2:
            self.mem, self.peak = os.path.join(d, "memory.current"), os.path.join(d, "memory.peak")
        else:
            m = glob.glob(f"/sys/fs/cgroup/memory/**/{cid}/memory.usage_in_bytes", recursive=True)
            if not m:
                raise RuntimeError(f"no memory cgroup file for container {cid[:12]}")
            self.mem = m[0]
            self.peak = os.path.join(os.path.dirname(m[0]), "memory.max_usage_in_bytes")

    def cpu_seconds(self):
        with open(self.cpu) as f:
            if not self.v2:
                return int(f.read()) / 1e9
            for line in f:
                k, _, v = line.partition(" ")
                if k == "usage_usec":
                    return int(v) / 1e6
        raise RuntimeError(f"no usage_usec in {self.cpu}")

    def memory(self):
        with open(self.mem) as f:
            return int(f.read())

    def memory_peak(self):
        try:
            with open(self.peak) as f:
                return int(f.read())
        except OSError:
            return 0


class Sampler(threading.Thread):
    """The container's memory use every 0.25 s; mark() starts a new window."""

    def __init__(self, cg):
        super().__init__(daemon=True)
        self.cg, self.peak, self.stop, self.lock = cg, 0, threading.Event(), threading.Lock()

    def run(self):
        while not self.stop.is_set():
            try:
                m = self.cg.memory()
            except OSError:
                return
            with self.lock:
                self.peak = max(self.peak, m)
            time.sleep(0.25)

    def mark(self):
        with self.lock:
            p, self.peak = self.peak, self.cg.memory()
        return p


def host_cpu():
    """(busy, total) jiffies of the whole host from /proc/stat."""
    with open("/proc/stat") as f:
        return freecores.busy_jiffies(f.readline())


HZ = os.sysconf("SC_CLK_TCK")


def room_snapshot(cgs):
    """(now, the host's busy CPU seconds, the CPU seconds of the containers CGS), read together; None if a cgroup is gone."""
    try:
        return time.time(), host_cpu()[0] / HZ, sum(cg.cpu_seconds() for cg in cgs)
    except (OSError, RuntimeError, ValueError):
        return None


NCPU = os.cpu_count()


def loadavg():
    with open("/proc/loadavg") as f:
        return [float(x) for x in f.read().split()[:3]]


# ---- notebooks through the kernel websocket behind the proxy
def run_notebook(name, tok, path, cg, sampler, room_cgs, timeout=1800):
    """Every code cell of PATH in a new gonb kernel of NAME's server: a record per cell.
    ROOM_CGS are the cgroups of every participant of the step (NAME's too): the
    CPU the host spent on anything else during a cell is its other work."""
    cells = roomlib.notebook_cells(BASE, name, tok, path)
    recs, before = [], {}

    def on_send(idx):
        sampler.mark()
        before.update(room=room_snapshot(room_cgs), cpu=cg.cpu_seconds(), t=time.time())

    def on_reply(idx):
        t1, c1 = time.time(), cg.cpu_seconds()
        r0, r1 = before["room"], room_snapshot(room_cgs)
        rec = {"notebook": path[:-len(".ipynb")], "index": idx, "start": before["t"], "wall": t1 - before["t"],
               "cpu": c1 - before["cpu"], "mem_peak": sampler.mark()}
        if r0 and r1:
            # the step's fields, over this cell (the reads just before and after it)
            rec.update(host_busy_cpu=r1[1] - r0[1], room_cpu=r1[2] - r0[2])
            free = freecores.free_cores(NCPU, r1[0] - r0[0], r1[1] - r0[1], r1[2] - r0[2])
            if free is not None:
                rec["free_cores"] = free
        recs.append(rec)

    try:
        err, _ = roomlib.run_cells(BASE, name, tok, cells, path, timeout=timeout, on_send=on_send, on_reply=on_reply)
    except Exception as e:  # noqa: BLE001 - recorded with the cells so far; the step goes on
        err = f"{type(e).__name__}: {e}"
    return recs, err, len(cells)


def wait_ready(admin, name, timeout=900):
    roomlib.wait_ready(BASE, admin, name, timeout, poll=0.5)


def participant_token(admin, name):
    r = requests.post(f"{BASE}/hub/api/users/{name}/tokens", headers=auth(admin), json={"note": "room capacity", "expires_in": 14400}, timeout=60)
    r.raise_for_status()
    return r.json()["token"]


def step(admin, n, notebooks):
    # letters and digits only: DockerSpawner escapes any other character in
    # the container name ("-" becomes "-2d"), which Cgroup looks up by name
    names = [f"cap{n}p{i + 1}" for i in range(n)]
    load0 = loadavg()
    for name in names:
        r = requests.post(f"{BASE}/hub/api/users/{name}", headers=auth(admin), timeout=60)
        if r.status_code not in (201, 409):
            raise RuntimeError(f"creating {name}: HTTP {r.status_code}")
    spawn, spawn_failed = {}, {}

    def start(name):
        t0 = time.time()
        try:
            r = requests.post(f"{BASE}/hub/api/users/{name}/server", headers=auth(admin), timeout=900)
            if r.status_code not in (201, 202):
                raise RuntimeError(f"HTTP {r.status_code}")
            wait_ready(admin, name)
            spawn[name] = time.time() - t0
        except Exception as e:  # noqa: BLE001 - recorded; the step goes on with the servers that started
            spawn_failed[name] = f"after {time.time() - t0:.0f} s: {type(e).__name__}: {e}"[:300]

    ths = [threading.Thread(target=start, args=(nm,)) for nm in names]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    if not spawn:
        raise RuntimeError(f"N={n}: no server started: {spawn_failed}")
    if spawn_failed:
        say(f"N={n}: {len(spawn_failed)} servers did not start: {spawn_failed}")
    all_names, names = names, [nm for nm in names if nm in spawn]
    people = {}
    for name in names:
        cg = Cgroup(name)
        s = Sampler(cg)
        s.start()
        people[name] = {"cg": cg, "sampler": s, "token": participant_token(admin, name),
                        "spawn_seconds": spawn[name], "spawn_cpu": cg.cpu_seconds(), "spawn_mem_peak": cg.memory_peak()}
    say(f"N={n}: {n} servers up (spawn {min(spawn.values()):.0f}-{max(spawn.values()):.0f} s); running {', '.join(notebooks)}")
    results = {}
    room_cgs = [p["cg"] for p in people.values()]
    cpu0 = {nm: p["cg"].cpu_seconds() for nm, p in people.items()}
    h0, t0 = host_cpu(), time.time()

    def work(name):
        p = people[name]
        cells, errors, counts = [], [], {}
        try:
            for nb in notebooks:
                if past_limit():
                    errors.append(f"{nb}: not run, past ROOM_CAPACITY_MAX_MINUTES={MAX_MINUTES:g}")
                    continue
                recs, err, count = run_notebook(name, p["token"], nb, p["cg"], p["sampler"], room_cgs)
                cells.extend(recs)
                counts[nb[:-len(".ipynb")]] = count
                if err:
                    errors.append(f"{nb}: {err[:300]}")
        except Exception as e:  # noqa: BLE001 - recorded with the cells so far
            errors.append(f"{type(e).__name__}: {e}"[:300])
        results[name] = (cells, errors, counts)

    ths = [threading.Thread(target=work, args=(nm,)) for nm in names]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    h1, t1 = host_cpu(), time.time()
    room_cpu = sum(p["cg"].cpu_seconds() - cpu0[nm] for nm, p in people.items())
    ncpu = NCPU
    host_busy = (h1[0] - h0[0]) / HZ
    out = {"n": n, "notebooks": [nb[:-len(".ipynb")] for nb in notebooks], "load_start": load0, "load_end": loadavg(),
           "seconds": t1 - t0, "cores": ncpu, "host_busy_cpu": host_busy, "room_cpu": room_cpu,
           # cores the host used for anything but the participants' containers, on average over the step
           "background_cores": max(0.0, (host_busy - room_cpu) / (t1 - t0)),
           "spawn_failed": spawn_failed, "participants": []}
    for name in names:
        p = people[name]
        cells, errors, counts = results[name]
        out["participants"].append({"name": name, "spawn_seconds": p["spawn_seconds"], "spawn_cpu": p["spawn_cpu"],
                                    "spawn_mem_peak": p["spawn_mem_peak"], "mem_peak": p["cg"].memory_peak(),
                                    "cell_counts": counts, "errors": errors, "cells": cells})
        p["sampler"].stop.set()
    bad = [f"{nm}: {e}" for nm in names for e in results[nm][1]]
    say(f"N={n}: done in {t1 - t0:.0f} s; background {out['background_cores']:.2f} cores; load {out['load_end']}" +
        (f"; {len(bad)} notebook errors: {bad[0]}" if bad else ""))
    # Stop the servers (DockerSpawner removes the containers), then the users.
    for name in all_names:
        requests.delete(f"{BASE}/hub/api/users/{name}/server", headers=auth(admin), timeout=300)
    for _ in range(300):
        if not docker("ps", "-aq", "--filter", "name=^nightqueue-room-cap").stdout.strip():
            break
        time.sleep(1)
    for name in all_names:
        requests.delete(f"{BASE}/hub/api/users/{name}", headers=auth(admin), timeout=120)
        docker("volume", "rm", "-f", f"nightqueue-room-{name}", check_rc=False)
    return out


def main():
    say(f"steps N = {NS}; solo: {' '.join(SOLO)}; sweep: {' / '.join(' '.join(g) for g in SWEEPS)}; room on 127.0.0.1:{PORT}; load {loadavg()}")
    proc = roomlib.start_room(ENV, BASE, ROOM_LOG)
    ROOMS.append(proc)
    admin = admin_token()
    # The sweeps first, a group at a time (N = 1 is its solo run), then one
    # participant alone through the notebooks of ROOM_CAPACITY_SOLO no group ran.
    plan = [(n, g, "sweep", gi) for gi, g in enumerate(SWEEPS) for n in NS]
    rest = [nb for nb in SOLO if nb not in SWEEP]
    for session in (SESSION_TWO, SESSION_ONE):  # session two first: a bounded run (ROOM_CAPACITY_MAX_MINUTES) gets some of each
        part = [nb for nb in rest if nb[:-len(".ipynb")] in session]
        if part:
            plan.append((1, part, "solo", None))
    steps = []
    for n, notebooks, kind, group in plan:
        if past_limit():
            say(f"skipping N={n} ({kind}: {' '.join(notebooks)}): past ROOM_CAPACITY_MAX_MINUTES={MAX_MINUTES:g}")
            continue
        steps.append(dict(step(admin, n, notebooks), kind=kind, **({} if group is None else {"sweep": group})))
        with open(OUT, "w") as f:
            json.dump({"cores": os.cpu_count(), "mem_total": os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"),
                       "cpu_limit": float(ENV["ROOM_CPU_LIMIT"]), "mem_limit": ENV["ROOM_MEM_LIMIT"],
                       "solo": [nb[:-len(".ipynb")] for nb in SOLO], "sweep": [[nb[:-len(".ipynb")] for nb in g] for g in SWEEPS],
                       "started": T_START, "ended": time.time(),
                       "steps": steps}, f, indent=1)
    say(f"wrote {OUT}")
    return 0


ROOMS = []


def stop_rooms():
    for p in ROOMS:
        roomlib.stop_room(p)
    left = docker("ps", "-aq", "--filter", "name=^nightqueue-room-cap", check_rc=False).stdout.split()
    if left:
        docker("rm", "-f", *left, check_rc=False)
    for v in docker("volume", "ls", "-q", "--filter", "name=nightqueue-room-cap", check_rc=False).stdout.split():
        docker("volume", "rm", "-f", v, check_rc=False)
    docker("network", "rm", NETWORK, check_rc=False)
    shutil.rmtree(STATE, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:  # noqa: BLE001 - one line, then stop
        say(f"stopped: {type(e).__name__}: {e}")
        sys.exit(1)
    finally:
        stop_rooms()

"""What the room test (room_test.py) and the capacity run (capacity.py) both
do with a room: find a block of free ports, run docker, start scripts/room.sh
and wait for its hub, wait for a participant's server, read a notebook's code
cells and run them through the server's kernel websocket behind the hub's
proxy, and stop the room as a terminal's Ctrl-C would.

Both run with the hub's venv (requests, tornado), as root, with DOCKER_HOST
at the test's own dockerd (tests/room/run.sh).
"""

import asyncio
import json
import os
import signal
import socket
import subprocess
import time
import uuid

import requests
from tornado import httpclient, websocket

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ROOM_SH = os.path.join(ROOT, "scripts", "room.sh")


def free_block(n):
    """A port p with p..p+n-1 all free on every address."""
    for _ in range(200):
        s = socket.socket()
        s.bind(("0.0.0.0", 0))
        p = s.getsockname()[1]
        s.close()
        if p + n >= 65535:
            continue
        good = True
        for q in range(p, p + n):
            t = socket.socket()
            try:
                t.bind(("0.0.0.0", q))
            except OSError:
                good = False
            finally:
                t.close()
        if good:
            return p
    raise RuntimeError(f"no block of {n} free ports")


def docker(*args, check_rc=True, timeout=120):
    """docker ARGS; a non-zero exit is a RuntimeError with docker's stderr unless check_rc is False."""
    r = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check_rc and r.returncode != 0:
        raise RuntimeError(f"docker {' '.join(args)}: {r.stderr.strip()}")
    return r


def auth(tok):
    return {"Authorization": f"token {tok}"}


def room_env(port, state, network, **extra):
    """room.sh's environment for a room on PORT (and the next three) with its
    state in STATE and its containers on NETWORK: fresh room and admin codes,
    the participant limits of this environment or room.sh's defaults."""
    env = dict(os.environ)
    env.update(
        ROOM_PORT=str(port),
        ROOM_STATE=state,
        ROOM_NETWORK=network,
        ROOM_CODE="room-" + uuid.uuid4().hex[:6],
        ROOM_ADMIN_CODE="admin-" + uuid.uuid4().hex,
        ROOM_MEM_LIMIT=os.environ.get("ROOM_MEM_LIMIT", "2G"),
        ROOM_CPU_LIMIT=os.environ.get("ROOM_CPU_LIMIT", "1"),
        **extra,
    )
    return env


def hub_up(base):
    try:
        return requests.get(f"{base}/hub/api/", timeout=3).status_code == 200
    except requests.RequestException:
        return False


def start_room(env, base, log_path, timeout=1800):
    """Starts room.sh with ENV in a session of its own, its output appended to
    LOG_PATH, and returns the process once it printed its ready line and the
    hub at BASE answers."""
    log = open(log_path, "a")
    # As from a terminal: SIGINT at its default even when this was started
    # with it ignored (a background job), or bash could not trap it.
    proc = subprocess.Popen([ROOM_SH], env=env, stdout=log, stderr=log, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"room.sh exited with {proc.returncode} (log {log_path})")
        with open(log_path) as f:
            if "room: [" in f.read() and hub_up(base):
                return proc
        time.sleep(2)
    raise RuntimeError(f"room.sh not ready in {timeout // 60} min (log {log_path})")


def stop_room(proc, timeout=300):
    """Ctrl-C to room.sh's session when it still runs; KILL after TIMEOUT seconds."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def wait_ready(base, admin, name, timeout=600, poll=1.0):
    """Seconds until NAME's server is ready, as the hub's REST API says (admin token ADMIN)."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        r = requests.get(f"{base}/hub/api/users/{name}", headers=auth(admin), timeout=60)
        if r.json().get("servers", {}).get("", {}).get("ready"):
            return time.time() - t0
        time.sleep(poll)
    raise RuntimeError(f"{name}'s server not ready after {timeout} s")


def notebook_cells(base, name, tok, path):
    """The code cells of PATH in NAME's server, as (position in the notebook, source)."""
    r = requests.get(f"{base}/user/{name}/api/contents/{path}", headers=auth(tok), timeout=60)
    r.raise_for_status()
    out = []
    for i, c in enumerate(r.json()["content"]["cells"]):
        if c["cell_type"] == "code":
            out.append((i, "".join(c["source"]) if isinstance(c["source"], list) else c["source"]))
    return out


def _execute_request(name, src):
    mid = uuid.uuid4().hex
    return mid, {"header": {"msg_id": mid, "msg_type": "execute_request", "username": name, "session": uuid.uuid4().hex,
                            "version": "5.3", "date": ""},
                 "parent_header": {}, "metadata": {}, "channel": "shell",
                 "content": {"code": src, "silent": False, "store_history": True, "user_expressions": {},
                             "allow_stdin": False, "stop_on_error": True}}


def run_cells(base, name, tok, cells, path, timeout=600, stdout=None, on_send=None, on_reply=None):
    """Runs CELLS ((position, source) pairs) in order in a new gonb kernel
    session of NAME's server for notebook PATH, over the kernel websocket
    behind the proxy at BASE, as a browser's Run does. Returns (error text,
    "" when every cell ran; seconds per cell that replied), a cell's seconds
    being from its execute_request sent to its execute_reply received. Stops
    at the first cell that fails. Appends what the cells print on stdout to
    the list STDOUT when given. ON_SEND(position) is called just before each
    request is sent and ON_REPLY(position) just after its reply arrives (the
    capacity run reads the container's counters there). Raises on a timeout
    of the whole run (TimeoutError) or a refused session."""
    r = requests.post(f"{base}/user/{name}/api/sessions", headers=auth(tok), timeout=120,
                      # name: the file's name, as JupyterLab sends it; Jupyter Server
                      # sets the kernel's JPY_SESSION_NAME from it (the room board reads it)
                      json={"path": path, "type": "notebook", "name": os.path.basename(path), "kernel": {"name": "gonb"}})
    r.raise_for_status()
    sess = r.json()
    kid = sess["kernel"]["id"]
    times = []

    async def go():
        url = base.replace("http", "ws", 1) + f"/user/{name}/api/kernels/{kid}/channels"
        req = httpclient.HTTPRequest(url, headers=auth(tok), request_timeout=120, connect_timeout=120)
        conn = await websocket.websocket_connect(req)
        try:
            for idx, src in cells:
                mid, msg = _execute_request(name, src)
                if on_send:
                    on_send(idx)
                t0 = time.time()
                await conn.write_message(json.dumps(msg))
                err, reply, idle = "", None, False
                # The reply comes on the shell channel and the cell's output on
                # iopub, in no set order between the two: a line printed can
                # arrive after the reply. Jupyter's messaging protocol ends a
                # request's output with iopub status "idle", so read to that.
                while reply is None or not idle:
                    raw = await conn.read_message()
                    if raw is None:
                        return "websocket closed (kernel died?)"
                    m = json.loads(raw)
                    if m.get("parent_header", {}).get("msg_id") != mid:
                        continue
                    kind = m["msg_type"]
                    if kind == "error":
                        err = m["content"].get("ename", "") + ": " + m["content"].get("evalue", "")
                    elif kind == "stream" and m["content"].get("name") == "stdout" and stdout is not None:
                        stdout.append(m["content"].get("text", ""))
                    elif kind == "execute_reply" and m.get("channel") == "shell":
                        times.append(time.time() - t0)
                        if on_reply:
                            on_reply(idx)
                        reply = m
                    elif kind == "status" and m["content"].get("execution_state") == "idle":
                        idle = True
                if reply["content"]["status"] != "ok":
                    return err or reply["content"].get("evalue", "error")
            return ""
        finally:
            conn.close()

    try:
        return asyncio.run(asyncio.wait_for(go(), timeout)), times
    finally:
        try:
            requests.delete(f"{base}/user/{name}/api/sessions/{sess['id']}", headers=auth(tok), timeout=120)
        except requests.RequestException:
            pass  # the kernel goes with its server

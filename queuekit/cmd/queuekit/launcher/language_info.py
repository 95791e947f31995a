"""language_info.py INFO KEY: write what the gonb kernel reports as its
language_info into INFO (queuekit workspace prepare, once per gonb binary).
The kernel is shut down cleanly and every process it started (gopls and
gopls' telemetry child included, which live in process groups of their own)
is gone afterwards."""
import json, os, signal, subprocess, sys, time
from jupyter_client.manager import start_new_kernel


def processes():
    """pid -> (ppid, command) of every process, from ps (Linux and macOS)."""
    out = subprocess.run(["ps", "-A", "-o", "pid=,ppid=,command="], capture_output=True, text=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2:
            table[int(parts[0])] = (int(parts[1]), parts[2] if len(parts) > 2 else "")
    return table


def descendants(root):
    """The processes below root, with their commands. gonb starts gopls in a
    process group of its own, so killing the kernel's group misses it: they
    are found by parentage instead, while the kernel still lives."""
    table, found, todo = processes(), {}, [root]
    while todo:
        parent = todo.pop()
        for pid, (ppid, cmd) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = cmd
                todo.append(pid)
    return found


def alive(pid, cmd):
    now = processes().get(pid)
    return now is not None and now[1] == cmd  # the same process, not a reused pid


km, kc = start_new_kernel(kernel_name="gonb", startup_timeout=120, stderr=subprocess.DEVNULL)
try:
    info = kc.kernel_info(reply=True, timeout=120)["content"]["language_info"]
finally:
    kernel_pid = getattr(getattr(km, "provisioner", None), "pid", None) or km.kernel.pid
    below = descendants(kernel_pid)
    kc.stop_channels()
    # A clean shutdown (shutdown_request) lets gonb stop its gopls itself;
    # now=True would SIGKILL gonb and orphan it.
    km.shutdown_kernel(now=False)
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 2.0)):
        left = {pid: cmd for pid, cmd in below.items() if alive(pid, cmd)}
        if not left:
            break
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(alive(p, c) for p, c in left.items()):
            time.sleep(0.1)
with open(sys.argv[1], "w") as f:
    json.dump({"gonb_sha256_16": sys.argv[2], "language_info": info}, f, indent=1)

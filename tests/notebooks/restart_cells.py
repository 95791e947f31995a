#!/usr/bin/env python3
"""After Kernel > Restart, a cell in the middle of every notebook runs, offline.

Usage (from the repository root, with the venv's python and DynamoDB Local and
ElasticMQ running; `make test-restart` starts its own servers):

    .venv/bin/python tests/notebooks/restart_cells.py [NOTEBOOK ...] [-v]

For each notebook (default: every notebooks/[0-9][0-9]-*.ipynb), in the real
gonb kernel as make setup installs it (the kernelspec in .venv, which
starts gonb with -go_work=<repository>):

  1. start a kernel in a folder outside the repository (as workspace/ or the
     room's volume: where the notebook lives must not matter), restart it
     the way JupyterLab's Kernel > Restart does (a shutdown request with
     restart, then a new kernel process), and run, as the first cell of the new
     kernel, the notebook's MIDDLE cell (below): it must succeed, with no
     error output;
  2. restart again and run the notebook's first cell that needs another
     cell's declarations (a `// needs NAME ... cell ...` first line, checked by
     check_cells.py): it must fail as a compile error that only says those
     names are undefined: nothing about `go get`, a module proxy or a 403, the
     failure issue 35 reported.

Every kernel runs with GOPROXY=off, so a cell that needed a module from the
network fails here instead of reaching the internet (the room is offline).
GOFLAGS keeps what the environment sets except -mod=...: the kernel's go.work
puts the go command in workspace mode, which refuses -mod=mod.

The middle cell is MIDDLE[prefix] when listed (a cheap cell past the first
code cell, chosen so the run stays short), else the first code cell after the
first one without a `// needs` line, else the first code cell. The server state a cell reads (the
catalog's sample nights) is seeded first with `queuekit seed --sample`:
that is data in DynamoDB Local, not kernel state.

Exit status 0 when every notebook passes, 1 otherwise; ends with
"restart_cells: N passed, N failed".
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_cells as cc  # noqa: E402
from run_notebooks import jupyter_env, strip_ansi  # noqa: E402

ROOT = HERE.parents[1]

# The middle cell run after a restart, by notebook prefix: cells that use
# queuekit packages and, where the notebook has them, packages another cell
# imported (05, 08, 10: goimports finds them through the kernel's go.work).
MIDDLE = {
    "00": "c09",          # DynamoDB answers (catalog, lab)
    "01": "c06",          # a night's keys, read with Query
    "02": "c21",          # write costs, batched or not
    "03": "c05",          # one night's summary
    "04": "c05",          # the stable night simulated
    "05": "c05-09",       # the lease exercise (lab, format from the first cell's imports)
    "06": "c6cc1f8e",     # which jobs suit a TTL timer
    "08": "c05",          # seed 003's plan (capacity, format, lab from the first cell's imports)
    "09": "c07",          # the forecast study's nights
    "10": "c47b3172",     # the shard projection (capacity, fleet, format, lab from the first cell's imports)
}
# What a restarted kernel must never print: the module proxy failure of issue 35.
NETWORK_FAILURE = re.compile(r"\"go get\"|403 Forbidden|module version is not available|proxy\.golang\.org|GOPROXY|module lookup disabled")
UNDEFINED = re.compile(r"undefined: (\w+)")


def code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]


def pick(path: Path) -> tuple[dict, dict | None]:
    """(the middle cell, the first cell with a needs line or None)."""
    cells = code_cells(path)
    src = {c["id"]: "".join(c["source"]) for c in cells}
    want = MIDDLE.get(path.name[:2])
    if want is not None:
        middle = next((c for c in cells if c["id"] == want), None)
        if middle is None:
            raise SystemExit(f"restart_cells: {path.name} has no code cell {want!r} (MIDDLE in {Path(__file__).name}): pick another")
        if src[want].lstrip().startswith(cc.NEEDS_PREFIX):
            raise SystemExit(f"restart_cells: {path.name} cell {want} needs another cell: MIDDLE must name a cell that runs alone")
    else:
        alone = [c for c in cells[1:] if src[c["id"]].strip() and not src[c["id"]].lstrip().startswith(cc.NEEDS_PREFIX)]
        middle = alone[0] if alone else cells[0]
    needs = next((c for c in cells if src[c["id"]].lstrip().startswith(cc.NEEDS_PREFIX)), None)
    return middle, needs


class Kernel:
    """One gonb kernel, restarted as JupyterLab restarts it."""

    def __init__(self, cwd: str, kernel_name: str = "gonb"):
        from jupyter_client.manager import KernelManager
        self.km = KernelManager(kernel_name=kernel_name)
        self.log = open(Path(cwd) / "kernel.log", "ab")
        self.km.start_kernel(cwd=cwd, stdout=self.log, stderr=self.log)
        self.kc = None
        self._connect()

    def _connect(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def restart(self) -> None:
        # JupyterLab's Kernel > Restart: a shutdown request with restart=True,
        # then a new process on the same connection file.
        self.km.restart_kernel(now=False)
        self._connect()

    def run(self, code: str, timeout: float) -> tuple[str, list[str], list[str]]:
        """(reply status, every output as text, error tracebacks)."""
        texts: list[str] = []

        def hook(msg):
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                texts.append(content.get("text", ""))
            elif kind in ("display_data", "execute_result"):
                data = content.get("data", {})
                for mime in ("text/plain", "text/markdown", "text/html"):
                    if mime in data:
                        texts.append(re.sub(r"<[^>]+>", " ", str(data[mime])) if mime == "text/html" else str(data[mime]))
            elif kind == "error":
                texts.append(strip_ansi("\n".join(content.get("traceback", [])) or content.get("evalue", "")))

        reply = self.kc.execute_interactive(code, output_hook=hook, timeout=timeout)
        content = reply["content"]
        errors = [strip_ansi(content.get("evalue", ""))] if content["status"] == "error" else []
        return content["status"], texts, errors

    def close(self) -> None:
        try:
            if self.kc is not None:
                self.kc.stop_channels()
            self.km.shutdown_kernel(now=False)
        finally:
            self.log.close()


def check_notebook(path: Path, args, workdir: str) -> list[str]:
    problems: list[str] = []
    name = path.name
    middle, needs = pick(path)
    kernel = Kernel(workdir, args.kernel)
    try:
        kernel.restart()
        t0 = time.monotonic()
        status, texts, errors = kernel.run("".join(middle["source"]), args.timeout)
        took = time.monotonic() - t0
        out = "".join(texts)
        if args.verbose:
            print(f"   middle cell {middle['id']}: {status} in {took:.1f} s; {out.strip()[:200]!r}", flush=True)
        if status != "ok" or errors:
            problems.append(f"{name}: after a restart, cell {middle['id']} failed: {(errors + [out])[0].strip()[:400]}"
                            + (f"\n     output: {out.strip()[-600:]}" if errors else ""))
        if needs is None:
            return problems
        first = "".join(needs["source"]).lstrip().splitlines()[0]
        kernel.restart()
        status, texts, errors = kernel.run("".join(needs["source"]), args.timeout)
        out = "\n".join(texts + errors)
        undefined = set(UNDEFINED.findall(out))
        named = {n for n in undefined if re.search(rf"(?<![\w.]){re.escape(n)}\b", first)}
        if args.verbose:
            print(f"   needs cell {needs['id']}: {status}; undefined {sorted(undefined)}; its first line: {first}", flush=True)
        if status != "error":
            problems.append(f"{name}: cell {needs['id']} says it needs another cell ({first}) but ran after a restart: "
                            "drop its needs line (check_cells.py keeps it honest)")
        elif NETWORK_FAILURE.search(out):
            problems.append(f"{name}: after a restart, cell {needs['id']} failed with a module or network failure, "
                            f"not the names it needs: {out.strip()[:400]}")
        elif not undefined:
            problems.append(f"{name}: after a restart, cell {needs['id']} failed, but not for the names its needs line lists: {out.strip()[:400]}")
        elif undefined - named:
            problems.append(f"{name}: after a restart, cell {needs['id']} lacks {', '.join(sorted(undefined - named))}, "
                            f"which its first line does not list: {first}")
    finally:
        kernel.close()
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks (default: notebooks/[0-9][0-9]-*.ipynb)")
    ap.add_argument("--kernel", default="gonb", help="kernelspec (default gonb, as make setup installs it)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    jupyter_env()
    os.environ["GOPROXY"] = "off"
    flags = [f for f in os.environ.get("GOFLAGS", "").split() if not f.startswith("-mod=")]
    os.environ["GOFLAGS"] = " ".join(flags)
    for var in ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"):
        if not os.environ.get(var):
            print(f"restart_cells: {var} is not set: start the servers (make dynamodb sqs) and export it, "
                  "or run make test-restart", file=sys.stderr)
            print("restart_cells: 0 passed, 1 failed")
            return 2
    paths = [Path(p) for p in args.notebooks] or [Path(p) for p in sorted(glob.glob(str(ROOT / "notebooks" / "[0-9][0-9]-*.ipynb")))]
    seed = subprocess.run(["go", "run", "./queuekit/cmd/queuekit", "seed", "--sample"], cwd=ROOT, capture_output=True, text=True)
    if seed.returncode != 0:
        print(f"restart_cells: queuekit seed --sample failed (the cells read the sample nights):\n{seed.stderr[-800:]}", file=sys.stderr)
        print("restart_cells: 0 passed, 1 failed")
        return 1
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="restart-cells-") as workdir:
        for path in paths:
            t0 = time.monotonic()
            print(f"-- {path.name}", flush=True)
            problems = check_notebook(path, args, workdir)
            print(f"   {'ok  ' if not problems else 'FAIL'} {time.monotonic() - t0:6.1f}s", flush=True)
            for p in problems:
                print(f"   - {p}", flush=True)
            passed, failed = passed + (not problems), failed + bool(problems)
    print(f"restart_cells: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

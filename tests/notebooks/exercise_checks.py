#!/usr/bin/env python3
"""Every exercise's self-checks, fed a wrong and a right answer in the real kernel.

Usage (from the repository root, with the venv's python and DynamoDB Local and
ElasticMQ running, AWS_ENDPOINT_URL_DYNAMODB and _SQS exported; `make
test-exercises` starts its own servers):

    .venv/bin/python tests/notebooks/exercise_checks.py [NOTEBOOK ...] [-v] [--list]

The exercises and their answers are in exercises.py (its docstring says what
is run and asserted). Each notebook's exercises run in one gonb kernel, as
make setup installs it, started in a scratch folder; the sample nights
are seeded first (`queuekit seed --sample`), as make workshop does.

A check's line is what queuekit/lab/check.go prints: "✓ pass: NAME ..." or
"✗ not yet: NAME ...". Exit status 0 when every exercise behaves, 1 when one
does not, 2 for usage (an unknown notebook, an exercise that names a cell or a
value line the notebook lacks). Ends with "exercise_checks: N passed, N failed".
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
from exercises import EXERCISES, Exercise  # noqa: E402
from restart_cells import Kernel  # noqa: E402

sys.path.insert(0, str(HERE.parents[0] / "lib"))
from checklines import check_lines, status_of  # noqa: E402
from run_notebooks import jupyter_env  # noqa: E402

ROOT = HERE.parents[1]


class Usage(Exception):
    """An exercise that does not fit its notebook (exit 2)."""


def assignment(name: str) -> re.Pattern:
    """An assignment line of NAME: groups (head, value, comment)."""
    return re.compile(
        rf"^(?P<head>[ \t]*(?:(?:const|var)[ \t]+)?{re.escape(name)}(?:[ \t]+[\w.\[\]*]+)?[ \t]*:?=[ \t]*)"
        r"(?P<value>.*?)(?P<comment>[ \t]*//.*)?$", re.M)


def rewrite(src: str, values: dict[str, str], replaces: list[tuple[str, str]], where: str) -> str:
    for name, value in values.items():
        pat = assignment(name)
        hits = pat.findall(src)
        if len(hits) != 1:
            raise Usage(f"{where}: {len(hits)} assignment lines of {name!r} (want exactly one): "
                        "fix exercises.py to match the notebook")
        src = pat.sub(lambda m: m.group("head") + value + (m.group("comment") or ""), src, count=1)
    for old, new in replaces:
        n = src.count(old)
        if n != 1:
            raise Usage(f"{where}: {old!r} occurs {n} times (want exactly once): fix exercises.py to match the notebook")
        src = src.replace(old, new)
    return src


GO_ERROR = re.compile(r"\S+\.go:\d+:\d+: .*|panic: .*|exit status \d+")


def brief(out: str) -> str:
    """The part of a failed cell's output worth a line: Go's compile errors or a panic, else its tail."""
    found = GO_ERROR.findall(out)
    return "; ".join(dict.fromkeys(f.strip() for f in found))[:500] if found else out.strip()[-500:]


def default_first(cells: list[dict], src: str) -> list[str]:
    first_line = src.lstrip().splitlines()[0] if src.strip() else ""
    if first_line.startswith(cc.NEEDS_PREFIX) and "first code cell" in first_line:
        return [cells[0]["id"]]
    return []


class Runner:
    def __init__(self, path: Path, args, workdir: str):
        self.path, self.args, self.workdir = path, args, workdir
        self.cells = [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
        self.src = {c["id"]: "".join(c["source"]) for c in self.cells}
        self.kernel: Kernel | None = None
        self.ran: set[str] = set()

    def cell(self, cid: str) -> str:
        if cid not in self.src:
            raise Usage(f"{self.path.name}: no code cell with id {cid!r}: fix exercises.py")
        return self.src[cid]

    def run(self, code: str, what: str) -> tuple[str, str]:
        if self.kernel is None:
            self.kernel = Kernel(self.workdir, self.args.kernel)
        t0 = time.monotonic()
        status, texts, errors = self.kernel.run(code, self.args.timeout)
        out = "\n".join(texts + errors)
        if self.args.verbose:
            checks = "; ".join(f"{s} {r[:70]}" for s, r in check_lines(out, strip=True)) or "no check printed"
            print(f"     {what}: {status} in {time.monotonic() - t0:.1f} s: {checks}", flush=True)
        return status, out

    def variant(self, ex: Exercise, values, replaces, label: str) -> tuple[list[tuple[str, str]], str]:
        """Runs the exercise cell rewritten, then its THEN cells; returns the check lines and the output."""
        code = rewrite(self.cell(ex.cell), values, replaces, f"{self.path.name} cell {ex.cell} ({label})")
        status, out = self.run(code, f"{ex.cell} {label}")
        lines = check_lines(out, strip=True)
        errors = [] if status == "ok" else [brief(out)]
        for cid in ex.then:
            status, more = self.run(self.cell(cid), f"{cid} after {label}")
            lines += check_lines(more, strip=True)
            out += more
            if status != "ok" and not check_lines(more, strip=True):
                errors.append(brief(more))
        return lines, "\n".join(errors)

    def exercise(self, ex: Exercise) -> list[str]:
        where = f"{self.path.name} {ex.cell}"
        src = self.cell(ex.cell)
        problems: list[str] = []
        for cid in ex.run_first if ex.run_first is not None else default_first(self.cells, src):
            if cid in self.ran:
                continue
            status, out = self.run(self.cell(cid), f"{cid} (run first)")
            if status != "ok":
                return [f"{where}: the cell {cid} it needs failed: {brief(out)}"]
            self.ran.add(cid)
        if ex.original:
            lines, _ = self.variant(ex, {}, [], "as written")
            failed = [r for s, r in lines if s == "fail"]
            if ex.original in ("fails", "no-pass") and not failed:
                problems.append(f"{where}: the untouched cell passes its checks ({len(lines)} printed): "
                                "a participant who changes nothing must see ✗")
            passed_lines = [r for st, r in lines if st == "pass"]
            if ex.original == "no-pass" and (passed_lines or not failed):
                problems.append(f"{where}: the untouched cell must earn no ✓ (its starting value is not an answer): "
                                f"{passed_lines[:2] or 'no ✗ printed'}")
            if ex.original == "passes" and (failed or not lines):
                problems.append(f"{where}: the cell as written should pass: {failed or 'no check printed'}")
        lines, err = self.variant(ex, ex.wrong, ex.replace_wrong, "wrong")
        for name in ex.fails:
            st = status_of(lines, name, "not printed")
            if st != "fail":
                problems.append(f"{where}: with the wrong answer ({ex.why or ex.wrong or ex.replace_wrong}) "
                                f"check {name!r} {'passed' if st == 'pass' else 'was not printed'}"
                                + (f"; the cell failed: {err}" if err else ""))
        lines, err = self.variant(ex, ex.right, ex.replace_right, "right")
        failed = [r for s, r in lines if s == "fail"]
        if not lines:
            problems.append(f"{where}: with the right answer no check was printed" + (f"; the cell failed: {err}" if err else ""))
        for rest in failed:
            problems.append(f"{where}: with the right answer ✗ {rest[:200]}")
        for name in ex.fails:
            if status_of(lines, name, "not printed") != "pass":
                problems.append(f"{where}: with the right answer check {name!r} did not print ✓")
        if err and not problems:
            problems.append(f"{where}: with the right answer the cell failed: {err}")
        return problems

    def close(self) -> None:
        if self.kernel is not None:
            self.kernel.close()


def check_notebook(path: Path, exercises: list[Exercise], args, workdir: str) -> tuple[list[str], int, int, str]:
    """Runs one notebook's exercises in a kernel of its own, started in a folder
    of its own under workdir; returns the lines to print, the exercises passed
    and failed, and a usage error ("" when none)."""
    stream = args.jobs <= 1  # one at a time: print as it goes
    lines: list[str] = []

    def say(line: str) -> None:
        if stream:
            print(line, flush=True)
        else:
            lines.append(line)

    say(f"-- {path.name}: {len(exercises)} exercise(s)")
    passed = failed = 0
    own = Path(workdir) / path.stem
    own.mkdir(parents=True, exist_ok=True)
    runner = Runner(path, args, str(own))
    try:
        for ex in exercises:
            t0 = time.monotonic()
            try:
                problems = runner.exercise(ex)
            except Usage as e:
                return lines, passed, failed, str(e)
            mark = "ok  " if not problems else "FAIL"
            say(f"   {mark} {ex.cell:<24} {time.monotonic() - t0:6.1f}s  {', '.join(ex.fails)[:90]}")
            for p in problems:
                say(f"     {p}")
            passed, failed = passed + (not problems), failed + bool(problems)
    finally:
        runner.close()
    return lines, passed, failed, ""


def run_all(work: list[tuple[Path, list[Exercise]]], args, workdir: str):
    """Yields check_notebook's result for each (notebook, exercises): in order,
    one at a time, or with --jobs N, N notebooks at a time (each notebook's
    exercises use that notebook's own tables and queues, as run_notebooks.py's
    --jobs explains), in the order they end."""
    if args.jobs <= 1:
        for path, exercises in work:
            yield check_notebook(path, exercises, args, workdir)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    slow_first = sorted(work, key=lambda w: -sum(EXPECTED.get(ex.cell, 5) for ex in w[1]))
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        futures = {pool.submit(check_notebook, path, exercises, args, workdir): path for path, exercises in slow_first}
        for fut in as_completed(futures):
            try:
                yield fut.result()
            except Exception as e:  # the worker process died: its notebook's exercises fail
                path = futures[fut]
                n = len(dict(work)[path])
                yield [f"-- {path.name}: the run's process failed: {type(e).__name__}: {e}"], 0, n, ""


# The order --jobs starts notebooks in, longest first: seconds an exercise's
# checks took (2026-11-29, 2 cores), by its cell; others count 5.
EXPECTED = {"c05-29": 16, "c05-s4": 9, "c05-25": 12, "c07-visibility": 21, "c07-pacing": 16, "31ae4c7e": 8,
            "c10-exercise-design-cell": 33, "c10-limits-3": 19, "c13": 8}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("notebooks", nargs="*", help="notebooks (default: every notebook with exercises)")
    ap.add_argument("--kernel", default="gonb", help="kernelspec (default gonb, as make setup installs it)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    ap.add_argument("--list", action="store_true", help="list the exercises and exit")
    ap.add_argument("--jobs", type=int, default=1, help="check this many notebooks at a time, each in its own kernel")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    by_prefix: dict[str, list[Exercise]] = {}
    for ex in EXERCISES:
        by_prefix.setdefault(ex.notebook, []).append(ex)
    all_paths = {Path(p).name[:2]: Path(p) for p in sorted(glob.glob(str(ROOT / "notebooks" / "[0-9][0-9]-*.ipynb")))}
    for prefix in by_prefix:
        if prefix not in all_paths:
            print(f"exercise_checks: exercises.py names notebook {prefix!r}, which notebooks/ lacks", file=sys.stderr)
            return 2
    if args.notebooks:
        paths = []
        for p in args.notebooks:
            prefix = Path(p).name[:2]
            if prefix not in all_paths:
                print(f"exercise_checks: {p}: not a workshop notebook (notebooks/NN-*.ipynb)", file=sys.stderr)
                return 2
            paths.append(all_paths[prefix])
    else:
        paths = [all_paths[p] for p in sorted(by_prefix)]
    if args.list:
        for path in paths:
            for ex in by_prefix.get(path.name[:2], []):
                print(f"{path.name} {ex.cell}: {', '.join(ex.fails)}")
        return 0
    jupyter_env()
    # Offline, as in the room: a cell that needed the module proxy fails here.
    os.environ["GOPROXY"] = "off"
    os.environ["GOFLAGS"] = " ".join(f for f in os.environ.get("GOFLAGS", "").split() if not f.startswith("-mod="))
    for var in ("AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_SQS"):
        if not os.environ.get(var):
            print(f"exercise_checks: {var} is not set: start the servers (make dynamodb sqs) and export it, "
                  "or run make test-exercises", file=sys.stderr)
            return 2
    seed = subprocess.run(["go", "run", "./queuekit/cmd/queuekit", "seed", "--sample"], cwd=ROOT, capture_output=True, text=True)
    if seed.returncode != 0:
        print(f"exercise_checks: queuekit seed --sample failed (the cells read the sample nights):\n{seed.stderr[-800:]}", file=sys.stderr)
        return 1
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="exercise-checks-") as workdir:
        work = [(path, by_prefix.get(path.name[:2], [])) for path in paths]
        for lines, p, f, usage in run_all(work, args, workdir):
            if lines:
                print("\n".join(lines), flush=True)
            if usage:
                print(f"exercise_checks: {usage}", file=sys.stderr)
                return 2
            passed, failed = passed + p, failed + f
    print(f"exercise_checks: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""freecores.py's per-cell free cores, with values worked by hand (make room-capacity runs this first)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import freecores as fc  # noqa: E402


def main() -> int:
    failures = []

    def expect(name, got, want):
        if want is None and got is not None or want is not None and (got is None or abs(got - want) > 1e-12):
            failures.append(f"{name}: got {got!r}, want {want!r}")

    # user 100, nice 5, system 50, idle 1000, iowait 20, irq 3, softirq 2, steal 1 (guest columns after are in user already):
    # busy 100 + 5 + 50 + 3 + 2 + 1 = 161, total 161 + 1020 = 1181
    busy, total = fc.busy_jiffies("cpu  100 5 50 1000 20 3 2 1 0 0")
    expect("busy jiffies", busy, 161)
    expect("total jiffies", total, 1181)
    # 4 cores, a 2 s cell: the host was busy 5 CPU s, 1 of them the participants': 4 s of other work in 2 s is 2 cores, 2 left
    expect("two cores left", fc.free_cores(4, 2, 5, 1), 2)
    # the participant alone using its core all along on an otherwise idle 4-core host: 4 left for it
    expect("idle host", fc.free_cores(4, 2, 2, 2), 4)
    # 0.5 s cell, host busy 1.9 CPU s on 2 cores, 0.4 of it the participant's: 1.5 s / 0.5 s = 3 cores of other work > 2: the floor
    expect("other work took more than the host", fc.free_cores(2, 0.5, 1.9, 0.4), fc.FLOOR)
    # the cgroups counted more than /proc/stat (coarse jiffies over a short cell): no other work, all cores free
    expect("cgroups ahead of /proc/stat", fc.free_cores(4, 1, 1, 1.5), 4)
    # 1-CPU stand-in: 8 cores, a 10 s cell, host busy 62 CPU s, participant 2: 60 s / 10 s = 6 cores of other work, 2 left
    expect("busy stand-in host", fc.free_cores(8, 10, 62, 2), 2)
    for args in [(4, 0, 1, 1), (4, -1, 1, 1), (0, 1, 1, 1), (4, 1, float("nan"), 1), (4, 1, 1, float("inf")), (4, 1, None, 1)]:
        expect(f"free_cores{args}", fc.free_cores(*args), None)
    for f in failures:
        print("FAIL", f, file=sys.stderr)
    print(f"test_freecores: {'FAIL' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The checks of check_cells.py can fail: each rule is shown a cell that breaks it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import check_cells as cc  # noqa: E402


def code(cid: str, src: str) -> dict:
    return {"cell_type": "code", "id": cid, "source": src}


def md(cid: str, src: str) -> dict:
    return {"cell_type": "markdown", "id": cid, "source": src}


IMPORTS = code("imp", 'import (\n\t"github.com/nightqueue/workshop/queuekit/lab"\n)\n\nvar ctx = context.Background()\n\nfunc helper() int { return 1 }\n')


def main() -> int:
    failures = []

    def expect(name: str, problems: list[str], want: str | None) -> None:
        if want is None and problems:
            failures.append(f"{name}: want no problem, got {problems}")
        if want is not None and not any(want in p for p in problems):
            failures.append(f"{name}: want a problem with {want!r}, got {problems}")

    long_body = "%%\n" + "".join(f"x{i} := {i}\n_ = x{i}\n" for i in range(13))
    expect("26 lines of code", cc.check_cells("99-t.ipynb", [code("long", long_body)]), "more than 25")
    expect("comments and blank lines do not count",
           cc.check_cells("99-t.ipynb", [code("ok", "%%\n" + "// note\n\n" * 40 + "x := 1\n_ = x\n")]), None)
    expect("uses lab from the import cell without a needs line",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "%%\nlab.Stop(nil)\n")]), "declared in another cell")
    expect("uses ctx and helper from the import cell",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "%%\n_ = ctx\n_ = helper()\n")]), "ctx, helper")
    expect("a needs line is enough",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "// needs the import cell\n%%\nlab.Stop(nil)\n")]), None)
    expect("a cell that imports what it uses works alone",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("own", 'import "github.com/nightqueue/workshop/queuekit/lab"\n\n%%\nctx := 1\n_ = ctx\nlab.Stop(nil)\n')]), None)
    expect("a measured figure typed in prose",
           cc.check_numbers("05-t.ipynb", [md("m", "The night executor ran at 48.6 jobs a second.")]), "the number 48.6")
    expect("constants, dates, versions, job ids and code spans pass",
           cc.check_numbers("05-t.ipynb", [md("m", "A partition takes 1,000 write units; 2026-05-13, JOB-20260513-006, DynamoDB Local 3.3.1, `x = 4629`, notebook 05.")]), None)
    for f in failures:
        print("FAIL", f)
    print(f"test_check_cells: {8 - len(failures)} of 8 passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

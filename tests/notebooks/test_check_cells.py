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
    checks = [0]

    def expect(name: str, problems: list[str], want: str | None) -> None:
        checks[0] += 1
        if want is None and problems:
            failures.append(f"{name}: want no problem, got {problems}")
        if want is not None and not any(want in p for p in problems):
            failures.append(f"{name}: want a problem with {want!r}, got {problems}")

    long_body = "%%\n" + "".join(f"x{i} := {i}\n_ = x{i}\n" for i in range(13))
    expect("26 lines of code", cc.check_cells("99-t.ipynb", [code("long", long_body)]), "more than 25")
    expect("comments and blank lines do not count",
           cc.check_cells("99-t.ipynb", [code("ok", "%%\n" + "// note\n\n" * 40 + "x := 1\n_ = x\n")]), None)
    pkgs = {"lab": ["queuekit/lab"], "format": ["queuekit/format"], "twice": ["queuekit/a/twice", "queuekit/b/twice"]}
    expect("uses lab from the import cell: goimports finds it after a restart",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "%%\nlab.Stop(nil)\n")], pkgs), None)
    twice = code("imp2", 'import "github.com/nightqueue/workshop/queuekit/a/twice"\n')
    expect("uses a package whose name two directories declare, imported elsewhere",
           cc.check_cells("99-t.ipynb", [twice, code("dep", "%%\ntwice.Do()\n")], pkgs), "goimports cannot tell which")
    expect("the repository's queuekit packages have unique names (so the rule above holds today)",
           [f"{k}: {v}" for k, v in cc.package_dirs().items() if len(v) > 1], None)
    expect("uses ctx and helper from the import cell",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "%%\n_ = ctx\n_ = helper()\n")], pkgs), "ctx, helper")
    expect("a needs line that lists the names and names the cell is enough",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "// needs ctx and helper from the first code cell\n%%\n_ = ctx\n_ = helper()\n")], pkgs), None)
    expect("a needs line that leaves a name out",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "// needs ctx from the first code cell\n%%\n_ = ctx\n_ = helper()\n")], pkgs), "does not list helper")
    expect("a needs line that does not say which cell",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("dep", "// needs ctx and helper\n%%\n_ = ctx\n_ = helper()\n")], pkgs), "does not name the cell")
    expect("a cell that wires the module by hand (the kernel's go.work does it)",
           cc.check_cells("99-t.ipynb", [code("mod", '!*go mod edit -require github.com/nightqueue/workshop@v0.0.0-00010101000000-000000000000 -replace "github.com/nightqueue/workshop=${GONB_DIR}/.."')], pkgs),
           "wires the module by hand")
    expect("a cell that imports what it uses works alone",
           cc.check_cells("99-t.ipynb", [IMPORTS, code("own", 'import "github.com/nightqueue/workshop/queuekit/lab"\n\n%%\nctx := 1\n_ = ctx\nlab.Stop(nil)\n')], pkgs), None)
    expect("a measured figure typed in prose",
           cc.check_numbers("05-t.ipynb", [md("m", "The night executor ran at 48.6 jobs a second.")]), "the number 48.6")
    expect("constants, dates, versions, job ids and code spans pass",
           cc.check_numbers("05-t.ipynb", [md("m", "A partition takes 1,000 write units; 2026-05-13, JOB-20260513-006, DynamoDB Local 3.3.1, `x = 4629`, notebook 05.")]), None)
    at_limit = " ".join(f"w{i}" for i in range(cc.MAX_MD_WORDS))
    expect("a Markdown cell of 151 words", cc.check_words("05-t.ipynb", [md("m", at_limit + " over")]), "151 words, more than 150")
    expect("a Markdown cell of 150 words passes", cc.check_words("05-t.ipynb", [md("m", at_limit)]), None)
    expect("a table's cells count, its rule and pipes do not",
           [] if cc.md_words("| a | b |\n|---|:--:|\n| c `d e` | [f](https://x.y/z) |\n") == 6 else ["counted wrong"], None)
    expect("a fenced code block, an image and HTML comments count nothing",
           [] if cc.md_words("one **two** —\n\n```go\nx := 1\n```\n![pic](a.png) <!-- note --> <br>three\n") == 3 else ["counted wrong"], None)
    for f in failures:
        print("FAIL", f)
    print(f"test_check_cells: {checks[0] - len(failures)} of {checks[0]} passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

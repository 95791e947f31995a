#!/usr/bin/env python3
"""Static checks of the workshop notebooks' sources (no kernel, no servers).

Usage (from the repository root; `make check-notebooks` runs it, and
`make test-notebooks` runs it before it executes the notebooks):

    python3 tests/notebooks/check_cells.py [NOTEBOOK ...]

Four rules of the house style (docs: /STYLE.md "Notebooks"), each a check:

1. **Cells show the idea**: a code cell holds at most MAX_CODE_LINES lines of
   code (blank lines, comment-only lines and kernel magics such as `%%` or a
   `!` shell line do not count). Plumbing belongs in queuekit/lab.
2. **After a kernel restart** every cell runs, or says in one line which cell
   to run first. The kernel, not a cell, wires the workshop module (setup.sh
   installs gonb with -go_work=<repository>: every kernel, a restarted one
   too, starts with a go.work that uses the repository), so:
   a. no cell sets the module up (`!*go mod edit ... -replace ...`, GONB_DIR):
      such a cell is what used to strand a restarted kernel;
   b. a cell may use a queuekit package that another cell imported: after a
      restart goimports finds it through the kernel's go.work, provided no
      other package of the module has the same name (checked here: else the
      cell imports it itself);
   c. a `%%` cell that uses a function, variable, constant or type another
      cell declared (GoNB memorizes declarations, a restart forgets them)
      starts with a `// needs NAME, ... from the <which> cell ...` line that
      lists every such name and names that cell.
3. **Numbers in prose come from the run**: every number in every Markdown cell
   is a constant of the lesson listed in lesson_constants.py with its source
   or reason (a price, a documented limit, a seed's figure, a parameter the
   cell sets). A figure a run produces is printed by the run, never typed.
4. **Prose a participant reads in a minute**: a Markdown cell holds one idea
   in at most MAX_MD_WORDS words, counted as a reader meets them (md_words):
   a word is a whitespace-separated token with a letter or a digit in it
   (so `|`, `-`, `**` and `—` alone are not words); headings count; a
   table's cells count (the reader reads them), its `|---|` rule does not;
   a link counts its text, not its target; a code span counts its tokens
   (`lease_until < now` is two words: `<` has no letter or digit); a
   fenced code block, an image and an HTML comment count nothing (the
   reader scans them as a picture), and an HTML tag's text counts but the
   tag does not. A longer cell is split at a paragraph
   boundary into cells of one idea each, or trimmed of repetition.

Exit status 0 when every notebook passes, 1 otherwise, with one line per
violation naming the notebook, the cell and what to do.
"""

from __future__ import annotations

import glob
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lesson_constants import allowed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MAX_CODE_LINES = 25
# Cells still over the limit, each to be split into a call to queuekit/lab:
# reported on every run, and the check fails once one of them fits (remove
# it from here then), so the list only shrinks.
OVER_LIMIT_PENDING: set[tuple[str, str]] = set()
NEEDS_PREFIX = "// needs "
MODULE = "github.com/nightqueue/workshop"
# A cell that wires the module by hand (the kernel's go.work does it).
MODULE_SETUP = re.compile(r"go\s+mod\s+edit|GONB_DIR|-replace\b")

# Go identifiers a cell declares before its `%%` (GoNB memorizes them).
DECL_FUNC = re.compile(r"^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)", re.M)
DECL_NAME = re.compile(r"^(?:var|const|type)\s+([A-Za-z_]\w*)", re.M)
DECL_BLOCK = re.compile(r"^(?:var|const|type)\s*\(\s*\n(.*?)^\)", re.M | re.S)
IMPORT_PATH = re.compile(r'"([^"]+)"')


def code_lines(src: str) -> int:
    n = 0
    for line in src.splitlines():
        s = line.strip()
        if not s or s.startswith("//") or s == "%%" or s.startswith(("!", "%")):
            continue
        n += 1
    return n


def split_cell(src: str) -> tuple[str, str]:
    """(declarations before %%, body after it); a cell without %% is all declarations."""
    m = re.search(r"^%%\s*$", src, re.M)
    if not m:
        return src, ""
    return src[: m.start()], src[m.end():]


def declared(decls: str) -> tuple[set[str], set[str]]:
    """(package names imported from this module, other names declared)."""
    pkgs: set[str] = set()
    for block in re.findall(r"^import\s*\((.*?)^\)", decls, re.M | re.S) + re.findall(r'^import\s+(".*?")', decls, re.M):
        for path in IMPORT_PATH.findall(block):
            if path.startswith("github.com/nightqueue/workshop"):
                pkgs.add(path.rsplit("/", 1)[-1])
    names = set(DECL_FUNC.findall(decls)) | set(DECL_NAME.findall(decls))
    for block in DECL_BLOCK.findall(decls):
        names |= set(re.findall(r"^\s*([A-Za-z_]\w*)", block, re.M))
    return pkgs, names


def package_dirs() -> dict[str, list[str]]:
    """Package name -> the module's importable directories declaring it (no
    internal/, no main, no tests), as goimports sees them through go.work."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "queuekit").rglob("*.go")):
        rel = path.parent.relative_to(ROOT)
        if path.name.endswith("_test.go") or "internal" in rel.parts or "testdata" in rel.parts:
            continue
        m = re.search(r"^package\s+(\w+)", path.read_text(encoding="utf-8", errors="replace"), re.M)
        if not m or m.group(1) == "main":
            continue
        dirs = found.setdefault(m.group(1), [])
        if str(rel) not in dirs:
            dirs.append(str(rel))
    return found


def strip_go(src: str) -> str:
    """Go source without comments and string literals (so a word in a string is not a use)."""
    src = re.sub(r"`[^`]*`", '""', src)
    src = re.sub(r'"(?:\\.|[^"\\])*"', '""', src)
    return re.sub(r"//[^\n]*", "", src)


def check_cells(nb_name: str, cells: list[dict], packages: dict[str, list[str]] | None = None) -> list[str]:
    problems = []
    if packages is None:
        packages = package_dirs()
    code = [(c.get("id", str(i)), "".join(c["source"])) for i, c in enumerate(cells) if c["cell_type"] == "code"]
    per_cell = {cid: declared(split_cell(src)[0]) for cid, src in code}
    for cid, src in code:
        n = code_lines(src)
        pending = (nb_name, cid) in OVER_LIMIT_PENDING
        if pending and n <= MAX_CODE_LINES:
            problems.append(f"{nb_name} cell {cid}: now {n} lines of code: remove it from OVER_LIMIT_PENDING in check_cells.py")
        elif pending:
            print(f"pending: {nb_name} cell {cid}: {n} lines of code, more than {MAX_CODE_LINES} (listed in OVER_LIMIT_PENDING)")
        elif n > MAX_CODE_LINES:
            problems.append(f"{nb_name} cell {cid}: {n} lines of code, more than {MAX_CODE_LINES}: "
                            "move the plumbing into queuekit/lab (with a test and an Example) and keep the decision and the call")
        setup = [ln.strip() for ln in src.splitlines() if ln.lstrip().startswith(("!", "%", "//gonb:")) and MODULE_SETUP.search(ln)]
        if setup:
            problems.append(f"{nb_name} cell {cid}: wires the module by hand ({setup[0][:60]}...): remove it; the kernel's go.work "
                            "(make setup installs gonb with -go_work=<repository>) does it, after a restart too")
        decls, body = split_cell(src)
        if not body.strip():
            continue
        own_pkgs, own_names = per_cell[cid]
        others_pkgs, others_names = set(), set()
        for other, (pk, nm) in per_cell.items():
            if other != cid:
                others_pkgs |= pk
                others_names |= nm
        text = strip_go(decls + "\n" + body)
        pkgs = {p for p in others_pkgs - own_pkgs if re.search(rf"(?<![\w.]){re.escape(p)}\.", text)}
        for p in sorted(pkgs):
            dirs = packages.get(p, [])
            if len(dirs) != 1:
                where = ", ".join(dirs) if dirs else "no directory of the module"
                problems.append(f"{nb_name} cell {cid}: uses package {p} imported in another cell, but {where} declares "
                                f"package {p}: after a restart goimports cannot tell which; import it in this cell")
        # a name the cell declares in its body (x := ..., var x) is its own
        body_own = set(re.findall(r"([A-Za-z_]\w*)\s*(?:,\s*[A-Za-z_]\w*\s*)*:=", strip_go(body)))
        uses = {n for n in others_names - own_names - body_own if re.search(rf"(?<![\w.]){re.escape(n)}\b", text)}
        if not uses:
            continue
        first = src.lstrip().splitlines()[0] if src.strip() else ""
        if not first.startswith(NEEDS_PREFIX):
            problems.append(f"{nb_name} cell {cid}: uses {', '.join(sorted(uses))} declared in another cell, but its first line "
                            f"is not a `{NEEDS_PREFIX}...` comment: after a kernel restart it fails; say which cell to run first")
            continue
        missing = sorted(n for n in uses if not re.search(rf"(?<![\w.]){re.escape(n)}\b", first))
        if missing or " cell" not in first:
            what = f"does not list {', '.join(missing)}" if missing else 'does not name the cell (say "from the first code cell", or "from the cell" and its title)'
            problems.append(f"{nb_name} cell {cid}: its `{NEEDS_PREFIX}...` line {what}: after a kernel restart the reader "
                            "learns from it what to run first")
    return problems


# Markdown text that holds digits but no figure: notebook and seed numbers,
# dates, job ids, link targets, code spans, headings' notebook numbers.
MD_NOT_FIGURES = [
    re.compile(r"```.*?```", re.S),
    re.compile(r"`[^`]*`"),
    re.compile(r"\]\([^)]*\)"),                     # link targets
    re.compile(r"<[^>]+>"),                          # HTML tags
    re.compile(r"\b\d{4}-\d{2}-\d{2}\b"),           # dates (sample nights, price dates)
    re.compile(r"\b\d+\.\d+\.\d+\b"),                # versions (DynamoDB Local 3.3.1)
    re.compile(r"\bJOB-\d+-\d+\b"),                 # job ids
    re.compile(r"\b(?:[Nn]otebooks?|[Ss]eeds?|[Jj]obs?)\s+\d{2,3}(?:\s*(?:,|and|or)\s*\d{2,3})*\b"),  # notebook 05, seed 003, job 006
    re.compile(r"^#+\s*\d{2}\s*·", re.M),           # "# 05 · title"
    re.compile(r"\[\d{2}\s*·"),                     # "[06 · title](...)"
    re.compile(r"\b\d{2}:\d{2}\b"),                 # clock times of the sample windows (01:00)
]
MD_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?![\w])")


def md_numbers(src: str) -> list[str]:
    for pat in MD_NOT_FIGURES:
        src = pat.sub(" ", src)
    return [m.rstrip(",.") for m in MD_NUMBER.findall(src)]


MAX_MD_WORDS = 150
MD_FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
MD_COMMENT = re.compile(r"<!--.*?-->", re.S)
MD_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
MD_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
MD_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
MD_TAG = re.compile(r"</?[A-Za-z][^>\n]*>")
MD_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$", re.M)
MD_WORD = re.compile(r"\S*[^\W_]\S*")  # a token with a letter or a digit in it


def md_words(src: str) -> int:
    """Words a participant reads in a Markdown cell (rule 4 in the module doc)."""
    src = MD_FENCE.sub(" ", src)
    src = MD_COMMENT.sub(" ", src)
    spans: list[str] = []

    def span(m: re.Match) -> str:
        spans.append(m.group(2))
        return " "

    src = MD_CODE_SPAN.sub(span, src)
    src = MD_IMAGE.sub(" ", src)
    src = MD_LINK.sub(r" \1 ", src)
    src = MD_TAG.sub(" ", src)
    src = MD_TABLE_RULE.sub(" ", src).replace("|", " ")
    return len(MD_WORD.findall(src)) + sum(len(MD_WORD.findall(s)) for s in spans)


def check_words(nb_name: str, cells: list[dict]) -> list[str]:
    problems = []
    for i, c in enumerate(cells):
        if c["cell_type"] != "markdown":
            continue
        n = md_words("".join(c["source"]))
        if n > MAX_MD_WORDS:
            problems.append(f"{nb_name} markdown cell {c.get('id', i)}: {n} words, more than {MAX_MD_WORDS}: split it at a "
                            "paragraph boundary into Markdown cells of one idea each (a new cell needs a unique \"id\"), "
                            "or cut repetition; keep every fact a later cell or docs/answers/README.md relies on")
    return problems


def check_numbers(nb_name: str, cells: list[dict]) -> list[str]:
    prefix = nb_name[:2]
    ok = allowed(prefix)
    problems = []
    for i, c in enumerate(cells):
        if c["cell_type"] != "markdown":
            continue
        for num in md_numbers("".join(c["source"])):
            if num not in ok:
                problems.append(f"{nb_name} markdown cell {c.get('id', i)}: the number {num} is not a constant of the lesson "
                                "(tests/notebooks/lesson_constants.py): print the sentence from the run's values, or add the "
                                "constant with its source if it is a price, a documented limit, a seed's figure or a parameter")
    return problems


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv] or [Path(p) for p in sorted(glob.glob(str(ROOT / "notebooks" / "[0-9][0-9]-*.ipynb")))]
    problems = []
    packages = package_dirs()
    for p in paths:
        cells = json.loads(p.read_text())["cells"]
        problems += check_cells(p.name, cells, packages) + check_numbers(p.name, cells) + check_words(p.name, cells)
    for line in problems:
        print(line)
    print(f"check_cells: {len(paths)} notebooks, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The self-check lines queuekit/lab/check.go prints, read back from a
kernel's output: "✓ pass: NAME", "✓ pass: NAME (detail)", "✗ not yet: NAME",
"✗ not yet: NAME: detail", "✗ not yet: NAME. Hint: hint". Used by the room
test (the board against what each kernel printed) and by
tests/notebooks/exercise_checks.py (wrong and right answers). No
dependencies beyond Python's standard library."""

from __future__ import annotations

PASS_MARK, NOT_YET_MARK = "✓ pass: ", "✗ not yet: "  # queuekit/lab/check.go
MARKS = ((PASS_MARK, "pass"), (NOT_YET_MARK, "fail"))


def is_line_of(line: str, mark: str, check_name: str) -> bool:
    """Whether LINE is the self-check line of CHECK_NAME with MARK."""
    if not line.startswith(mark + check_name):
        return False
    rest = line[len(mark + check_name):]
    return rest == "" or rest.startswith((" (", ": ", ". Hint: "))


def check_lines(text: str, strip: bool = False) -> list[tuple[str, str]]:
    """[(status, the line without its mark)] for every self-check line of
    TEXT, in order; status is "pass" or "fail". STRIP also takes a line
    whose mark follows blanks (text read out of HTML output)."""
    out = []
    for line in text.splitlines():
        if strip:
            line = line.strip()
        for mark, status in MARKS:
            if line.startswith(mark):
                out.append((status, line[len(mark):]))
    return out


def status_of(lines: list[tuple[str, str]], check_name: str, missing: str = "not run") -> str:
    """What LINES (check_lines' answer) printed last for CHECK_NAME: "pass",
    "fail", or MISSING when it printed nothing for it."""
    status = missing
    for st, rest in lines:
        for mark, _ in MARKS:
            if is_line_of(mark + rest, mark, check_name):
                status = st
    return status

"""The workshop's exercises, each with a wrong and a right answer, fed to the
notebook's own self-checks in the real GoNB kernel by exercise_checks.py.

One Exercise per decision a participant makes. Its cell is the code cell (by
its "id" in the .ipynb) whose plain assignment lines the participant edits:

    myShards := 40                 // name := value
    var lease = 4 * time.Minute    // var name = value, var name T = value
    const k = 3                    // const name = value (also inside const ( ... ))
    myDesign = "two-tier"          // name = value

WRONG and RIGHT map such a name to the Go expression that replaces its value
(everything after the `=` up to a trailing `//` comment). A name must match
exactly one assignment line of the cell, so a notebook edit that renames it
fails the test instead of silently checking nothing. REPLACE_WRONG and
REPLACE_RIGHT, lists of (old, new) pairs, rewrite anything else (old must
occur exactly once).

The test, per exercise, in one kernel per notebook:
  1. runs RUN_FIRST (cell ids; by default the first code cell when the
     exercise cell's first line is a `// needs ... first code cell` line),
  2. runs the cell as written when ORIGINAL is "fails" (the untouched
     skeleton must print a ✗ line for some check) or "passes",
  3. runs the cell with WRONG (then the THEN cells, which may print checks
     too): every check named in FAILS must print "✗ not yet: <check>",
  4. runs it with RIGHT (then THEN): every check printed passes, at least
     one is printed, and every check named in FAILS printed "✓ pass".

The right answers are the instructor's (docs/answers/README.md says why they
are right); the wrong ones are the mistakes a participant makes.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Exercise:
    notebook: str                     # the notebook's two-digit prefix, "05"
    cell: str                         # the exercise cell's id
    fails: list[str]                  # checks that must print ✗ with WRONG and ✓ with RIGHT
    wrong: dict[str, str] = field(default_factory=dict)
    right: dict[str, str] = field(default_factory=dict)
    replace_wrong: list[tuple[str, str]] = field(default_factory=list)
    replace_right: list[tuple[str, str]] = field(default_factory=list)
    run_first: list[str] | None = None
    then: list[str] = field(default_factory=list)
    original: str | None = None       # "fails", "passes" or None (not run)
    why: str = ""                     # what the wrong answer gets wrong (printed on failure)


EXERCISES: list[Exercise] = [
    # Entries by notebook, in notebook order. Keep each entry's WHY short.

    # 08: L = λW = 50e6/86,400 × 600 s = 347,222 jobs at once; a machine holds
    # min(64 threads, 16,000 MB / 400 MB = 40) = 40, so ⌈347,222 / 40⌉ = 8,681, memory binds.
    Exercise(notebook="08", cell="c28", fails=["machines", "binding constraint"],
             wrong={"machines": "5426", "binding": '"threads"'}, why="64 jobs a machine: threads taken as the limit",
             right={"machines": "8681", "binding": '"memory"'}, original="fails"),
]

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
     skeleton must print a ✗ line for some check), "no-pass" (a ✗ and no
     ✓ at all: a starting value earns nothing) or "passes",
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
    original: str | None = None       # "fails", "no-pass" (every check ✗), "passes" or None (not run)
    why: str = ""                     # what the wrong answer gets wrong (printed on failure)


EXERCISES: list[Exercise] = [
    # Entries by notebook, in notebook order. Keep each entry's WHY short.

    # 01: the 03:00 window is the sort key's prefix, in the key condition:
    # the untouched key reads the whole night (12 items for 3).
    Exercise(notebook="01", cell="c18", fails=["items returned by your Query"],
             wrong={"key": 'expression.Key("batch_date").Equal(expression.Value("2026-05-14"))'},
             why="the whole night, not the window",
             right={"key": 'expression.Key("batch_date").Equal(expression.Value("2026-05-14")).And(expression.Key("window_job_id").BeginsWith("03:00#"))'},
             original="fails"),
    # 01: question D priced by AWS's rules against the best index holding
    # every item (GSI workload_class + batch_date, INCLUDE job_id and the
    # runtime: 40 write units on 2026-05-13, 1 read unit). ALL doubles every
    # status change (60); a sparse GSI on maintenance_date holds 48 of 379
    # items (33 units) and passes even with ALL; an LSI on maintenance_date
    # reads 31 nights but writes least.
    Exercise(notebook="01", cell="c30", fails=["costs no more than the best index that holds every item"],
             wrong={"partitionKey": '"workload_class"', "sortKey": '"batch_date"'},
             why="ALL writes every status change to the index too",
             right={"partitionKey": '"workload_class"', "sortKey": '"maintenance_date"'}, original="fails"),
    Exercise(notebook="01", cell="c30", fails=["costs no more than the best index that holds every item"],
             wrong={"partitionKey": '"workload_class"', "sortKey": '"batch_date"', "projection": '"KEYS_ONLY"'},
             why="KEYS_ONLY lacks the runtime: a GetItem per job of D",
             right={"partitionKey": '"workload_class"', "sortKey": '"batch_date"', "projection": '"INCLUDE"',
                    "include": '[]string{"job_id", "estimated_runtime_minutes"}'}),
    Exercise(notebook="01", cell="c30", fails=["D's answer: the right jobs, oldest first"],
             wrong={"partitionKey": '"status"'}, why="D names no status: no Query of it can answer D",
             right={"kind": '"LSI"', "sortKey": '"maintenance_date"', "projection": '"KEYS_ONLY"'}),
    Exercise(notebook="01", cell="c30", fails=["D's answer: the right jobs, oldest first"],
             wrong={"partitionKey": '"workload_class"', "sortKey": '"window_job_id"'},
             why="sorted by window, not by night",
             right={"partitionKey": '"workload_class"', "sortKey": '"maintenance_date"', "projection": '"KEYS_ONLY"'}),

    # 02: the Query reads the night only (1.5 units on every table), the
    # Scan every item (559.5 units for 365 nights, so about 1,119 for 730).
    Exercise(notebook="02", cell="c11", run_first=["c03"],
             fails=["Query read units for 730 nights", "Scan read units for 730 nights"],
             wrong={"queryUnits": "3.0", "scanUnits": "559.5"},
             why="scaled the Query with the table and kept the Scan at a year",
             right={"queryUnits": "1.5", "scanUnits": "1119"},
             original="fails"),
    # 03: ρ = 3 / (c × 60/51.67) < 0.5 first at c = 6 (c = 5 gives 0.517);
    # with 6 workers the locked work keeps the pool busy 355 + 265/6 = 399
    # minutes, more than a 390-minute window although 355 alone fits.
    Exercise(notebook="03", cell="c23",
             fails=["smallest c with ρ < 0.5", "the locked work fits in 390 minutes with that c"],
             wrong={"c": "5", "fits": "true"},
             why="ρ of c = 5 is 0.517; only the exclusive minutes were compared with the window",
             right={"c": "6", "fits": "false"},
             original="fails"),
    # 04: at CV 0.25 two workers overflow on 0.3 % of 4,000 nights (seed 1),
    # against 8.9 % at CV 0.5: the overflow is a tail event that shrinks
    # fast with the CV.
    Exercise(notebook="04", cell="c27", fails=["P(overflow) above 5% with 2 workers at CV 0.25"],
             wrong={"above": "true"},
             why="read the CV 0.5 sweep as if the CV did not matter",
             right={"above": "false"},
             original="fails"),

    # 05: the reaper takes a lease over after seeing it unchanged for more
    # than a lease, on reaps every max(30 s, lease/8) rounded up to whole
    # polls: the worst detection is lease + 2 reaps (leaselab.Lease.Detection).
    # 9 min: 12 min, late (lease + poll said 9.5); 8 min: exactly 10, late
    # by the reap's own requests; 2 min: 50 heartbeats, 150 units.
    Exercise(notebook="05", cell="c05-09", run_first=["c05-03"], fails=["a dead worker's job is found within 10 minutes"],
             wrong={"leaseMinutes": "9.0", "predictedDetection": "9.5"}, why="lease + one poll: the reaper's rule is lease + 2 reap intervals",
             right={"leaseMinutes": "4.0", "predictedDetection": "5.0"}, original="no-pass"),
    Exercise(notebook="05", cell="c05-09", run_first=["c05-03"], fails=["a dead worker's job is found within 10 minutes"],
             wrong={"leaseMinutes": "8.0", "predictedDetection": "10.0"}, why="a bound of exactly 10 minutes misses by the reap's requests",
             right={"leaseMinutes": "5.0", "predictedDetection": "7.0"}),
    Exercise(notebook="05", cell="c05-09", run_first=["c05-03"], fails=["heartbeats cost at most 120 write units a job"],
             wrong={"leaseMinutes": "2.0"}, why="50 heartbeats of 3 units",
             right={"leaseMinutes": "4.0"}),
    # 05: 0.3^(1+r) <= 0.001 needs r >= 5; 2^r - 1 <= 40 needs r <= 5.
    Exercise(notebook="05", cell="c05-25", fails=["a flaky job is dead-lettered at most once in 1,000 nights"],
             wrong={"maxRetry": "4", "predictedAttempts": "3.0"}, why="0.3^5 = 0.0024",
             right={"maxRetry": "5", "predictedAttempts": "3.0"}, original="no-pass"),
    Exercise(notebook="05", cell="c05-25", fails=["the backoffs fit in 40 job-minutes"],
             wrong={"maxRetry": "6"}, why="backoffs 63 job-minutes",
             right={"maxRetry": "5"}),
    # 05: the five exclusive jobs hold the pool in turn whatever c is: 9 late.
    Exercise(notebook="05", cell="c05-29", fails=["jobs after the cutoff with 3 workers, by the pool's rules"],
             wrong={"late": "6"}, why="a third worker does not help exclusive jobs", right={"late": "9"}, original="fails"),
    # 05: a pause of a quarter lease: the lease is never seen unchanged for a
    # whole lease, so one attempt and nothing fenced.
    Exercise(notebook="05", cell="c05-s4", run_first=["c05-03"], fails=["attempts of the job", "late ends fenced"],
             wrong={"attempts": "2", "fenced": "1"}, why="a quarter-lease pause does not stop the heartbeats for a lease",
             right={"attempts": "1", "fenced": "0"}, original="fails"),

    # 06: TTL is late by days (a week must be harmless) and an expired item
    # stays readable until deleted; SQS holds a message back at most 15
    # minutes. The lookup's plan (TTL for everything, a delay for the rest)
    # breaks three rules; the right one uses each mechanism where it fits.
    Exercise(notebook="06", cell="c6cc1f8e",
             fails=["TTL carries only jobs that may start a week late",
                    "readers stop seeing a timer when it is due, where they must",
                    "a delay queue holds only what is due within 15 minutes"],
             wrong={"archiveFinishedJobs": '"ttl"', "startETL0100": '"ttl"', "retryIn5Minutes": '"delay-queue"',
                    "dropAttemptRecords": '"ttl"', "deadlineReminder": '"delay-queue"', "expireShareLink": '"ttl"'},
             why="the 01:00 ETL on TTL, the share link unfiltered, a reminder days ahead on a 15-minute delay",
             right={"archiveFinishedJobs": '"ttl"', "startETL0100": '"scheduler"', "retryIn5Minutes": '"delay-queue"',
                    "dropAttemptRecords": '"ttl"', "deadlineReminder": '"scheduler"', "expireShareLink": '"ttl+filter"'},
             original="fails"),

    # 07: a healthy slice dead-letters when all maxReceives receives fail:
    # 0.2^4 = 0.0016 > 0.001 (4 is wrong), 0.2^5 = 0.00032 (5 is right; 6 too);
    # the poison slice costs maxReceives receives, so at most 6.
    Exercise(notebook="07", cell="31ae4c7e", fails=["a healthy slice is dead-lettered at most once in 1,000"],
             replace_wrong=[("maxReceives := 0 ", "maxReceives := 4 ")], why="0.2^4 = 0.0016: more than once in 1,000",
             replace_right=[("maxReceives := 0 ", "maxReceives := 5 ")], right={"predictedDead": "1.0"},
             original="no-pass"),
    # The history's p95 is 2.28 s: 2 s leaves 19 of 200 (9.5 %) above it; 3 s
    # leaves 2 and brings a crashed slice back within 4 s.
    Exercise(notebook="07", cell="c07-visibility", fails=["at most 5 % of last week's slices outlive the timeout"],
             replace_wrong=[("visibilitySeconds := 0 ", "visibilitySeconds := 2 ")], why="2 s is under the p95: 9.5 % outlive it",
             replace_right=[("visibilitySeconds := 0 ", "visibilitySeconds := 3 ")], right={"predictedOutlive": "0.0"},
             original="no-pass"),
    # A worker asks once per 0.25 s slice, 4 a second: 2 ask 8, 3 ask 12 > 10.
    Exercise(notebook="07", cell="c07-pacing", fails=["the pool asks at most 10 requests a second"],
             replace_wrong=[("workers := 0 ", "workers := 3 ")], why="3 workers ask 12 requests a second",
             replace_right=[("workers := 0 ", "workers := 2 ")], right={"predictedThrottled": "1.0"},
             original="no-pass"),

    # 08: L = λW = 50e6/86,400 × 600 s = 347,222 jobs at once; a machine holds
    # min(64 threads, 16,000 MB / 400 MB = 40) = 40, so ⌈347,222 / 40⌉ = 8,681, memory binds.
    Exercise(notebook="08", cell="c28", fails=["machines", "binding constraint"],
             wrong={"machines": "5426", "binding": '"threads"'}, why="64 jobs a machine: threads taken as the limit",
             right={"machines": "8681", "binding": '"memory"'}, original="fails"),

    # 09: the fitted forecast drains by 240 from 5 workers on, yet 2026-05-04
    # is late on 42.4 % [39.4-45.5 %] of its realisations at 5 and at any larger
    # pool (the exclusive jobs run alone): no pool meets notebook 04's
    # per-night target. The lever is the exclusive jobs (run first: 2.7 %).
    Exercise(notebook="09", cell="c13", fails=["the pool meets the per-night target, or none does"],
             wrong={"workers": "5", "lever": '""'}, why="5 is the forecast's pick: late on 42 % of nights",
             right={"workers": "0", "lever": '"exclusive-jobs"', "predictedOverflow": "42.0"}, original="fails"),
    Exercise(notebook="09", cell="c13", fails=["the lever makes the night meet the target"],
             wrong={"workers": "0", "lever": '"more-workers"'}, why="more workers wait: late on 42 % at 10 too",
             right={"workers": "0", "lever": '"exclusive-jobs"'}),

    # 10: 3,000 jobs/s × 8 index writes (put, a moved key at the claim and at each of two
    # heartbeats, a delete) = 24,000 a second; ÷ 800 (a partition at 80 %) = 30 shards.
    Exercise(notebook="10", cell="096c3370", run_first=["953fecfe"], fails=["shards for 3,000 jobs/s with two heartbeats each"],
             wrong={"myShards": "15"}, why="the heartbeats' moved keys not counted: 4 index writes a job",
             right={"myShards": "30"}, original="fails"),
    # 10: the split of the roles. The one tier at seed 003's size: every one of 10,851 machines
    # reads all K shard items (pk = SHARD 1,468,502 read units a second on 1,000 shards, 489.5x a
    # partition), so the limits rule fails naming the key; two tiers with D = 3, K = 14 pass.
    Exercise(notebook="10", cell="c10-exercise-design-cell", fails=["every key, table and index under its limit"],
             wrong={"myDesign": '"one-tier"', "myDispatchers": "0", "myShards": "1000"},
             why="the one tier: every machine reads the shard items",
             right={"myDesign": '"two-tier"', "myDispatchers": "3", "myShards": "14"}, original="fails"),
    # 10: D and K of the two tiers: 2 dispatchers hand off 800 jobs a second of 1,157.4, and 8 shard
    # keys take 1,157.4 × 6 / 8 = 868 index write units each, over half a partition (500).
    Exercise(notebook="10", cell="c10-exercise-design-cell",
             fails=["the dispatchers hand off the cell's jobs", "each shard key's index writes within 50 % of a partition"],
             wrong={"myDesign": '"two-tier"', "myDispatchers": "2", "myShards": "8"}, why="D and K below the rules",
             right={"myDesign": '"two-tier"', "myDispatchers": "4", "myShards": "16"}),
    # 10, on the limits layer: the table takes 3 units a job (4,340 at 80 %), the due index 4
    # (5,787 at 80 %), each shard key at most 500: K >= 10. The old answer put all 7 units on the
    # table and gave the index nothing; 4 shard keys take 1,157 units each.
    Exercise(notebook="10", cell="c10-limits-3", fails=["the due index's warm throughput covers its own writes at 80 %"],
             wrong={"shards": "16", "tableWarm": "8102.0", "indexWarm": "0.0"}, why="all 7 units a job on the table, none on the index",
             right={"shards": "16", "tableWarm": "5000.0", "indexWarm": "10000.0"}, original="fails"),
    Exercise(notebook="10", cell="c10-limits-3", fails=["each shard key takes at most half a partition's 1,000 write units"],
             wrong={"shards": "4", "tableWarm": "5000.0", "indexWarm": "10000.0"}, why="4 shard keys: 1,157 index units a second each",
             right={"shards": "16", "tableWarm": "5000.0", "indexWarm": "10000.0"}),
]

"""Constants of the lesson: the numbers a notebook's Markdown may state.

Every other number in a Markdown cell is a figure a run produces and must be
printed by the run (tests/notebooks/check_cells.py enforces it). Each entry
says where the number comes from: a price, a documented AWS limit, a seed's
figure, or a parameter the cell itself sets (which the cell's code shows).
"""

from __future__ import annotations

# Numbers every notebook may use, by source.
GLOBAL: dict[str, list[str]] = {
    "small counts of the lesson's own setup (workers, slots, attempts, items, steps) set in the cells' code": [
        "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12"],
    "DynamoDB partition limits: 1,000 write units and 3,000 read units a second "
    "(developerguide/warm-throughput-scenarios.html); 4 KB read units, 1 KB write units; 400 KB items": [
        "1,000", "3,000", "4", "1", "400"],
    "DynamoDB new on-demand table: 4,000 write and 12,000 read units a second; throttling past double the "
    "previous peak within 30 minutes (developerguide/pre-warming-on-demand-capacity-mode.html); "
    "per-table quota 40,000 (developerguide/Limits.html)": ["4,000", "12,000", "30", "40,000"],
    "DynamoDB Streams keep records 24 hours; TTL typically deletes within 2 days (API UpdateTimeToLive)": ["24", "48"],
    "prices (capacity.Prices2026, us-east-1): on demand $0.625 per million writes, $0.125 per million reads, "
    "provisioned $0.00065 / $0.00013 per unit-hour, SQS $0.40 per million requests": [
        "0.625", "0.125", "0.00065", "0.00013", "0.40", "0.00225", "3,600"],
    "seed 003: 100 M jobs a day = 1,157 a second (86,400 s a day)": ["100", "1,157", "1,157.4", "86,400", "100,000,000"],
    "SQS: visibility timeout 30 s default, 12 hours at most; batches of 10; 5-minute FIFO deduplication interval; "
    "64 KB billing chunks; 1 MiB messages": ["30", "12", "10", "5", "64"],
    "SQS in flight: about 120,000 messages a standard queue (SQSDeveloperGuide/quotas-queues.html), "
    "120,000 a FIFO queue (SQSDeveloperGuide/quotas-fifo.html)": ["120,000"],
    "percent and percentiles named in rules (95th percentile, 80 % utilisation, 100 %)": ["95", "80", "100"],
    "lines of code a cell may hold (STYLE.md)": ["25"],
}

# Per notebook (two-digit prefix): reason -> numbers.
PER_NOTEBOOK: dict[str, dict[str, list[str]]] = {
    "05": {
        "the header's time, as the README's table of notebooks states it": ["35"],
        "parameters the cells set: 50, 20 and 10 ms a job-minute; a poll of a quarter job-minute (12.5 ms); "
        "1 ms clock = 0.02 job-minutes at 50 ms; polls 5 and 80 ms = 0.5 and 8 job-minutes at 10 ms; "
        "3 slots × 2 requests / 5 ms = 1,200 requests a second; a 1 s lease = 50 job-minutes at 20 ms; "
        "the exercises' targets (120 write units, 0.3 failure probability, 40 job-minutes of slack, a 0.5 s pause)": [
            "50", "20", "12.5", "0.02", "10", "8", "1,200", "120", "0.3", "40", "0.5"],
        "notebook 04's reference forecasts (queuekit/sim TestReferenceScenarios): 2026-05-13 drains at minute 160, "
        "2026-05-14 with 2 workers at 490": ["160", "490"],
        "Kleppmann, How to do distributed locking (2016)": ["2016"],
        "AWS billing rules: 2 × 3 + 1 + 2 × 3 = 13 write units a job; 1,000 / 13 ≈ 77 jobs a second on one partition; "
        "1,000 / 4 = 250 for the pool item alone; a heartbeat every 15 s for 25 minutes = 100 heartbeats, 300 units": [
            "13", "77", "250", "15", "300"],
    },
    "06": {
        "the header's time, as the README's table of notebooks states it": ["20"],
        "the measured table's size, 30 timers (a parameter of the cell); the header's 20 minutes": ["20", "30"],
        "SQS holds a message back at most 15 minutes (SQSDeveloperGuide/sqs-delay-queues.html); Lambda's DynamoDB "
        "event source mapping: BatchSize 100 by default, at most 10,000; ParallelizationFactor 1 by default, at most 10 "
        "(lambda/latest/dg/services-ddb-params.html)": ["15", "100", "10,000"],
        "DynamoDB Local 3.3.1 sweeps TTL in at most 7 tables at a time: its background jobs share a pool of 10 "
        "threads, 3 held by its schedulers (its bytecode; catalog.LocalTTLSweepers)": ["7"],
    },
    "07": {
        "parameters of the exercises: 0.2 failure probability per receive, poison slice 17, 0.25 s a request, "
        "0.3 s a slice": ["0.2", "17", "0.25", "0.3"],
        "SQS content-based deduplication: a SHA-256 hash of the body (SQS API Reference, SendMessage, "
        "MessageDeduplicationId)": ["256"],
        "SQS FIFO: 300 transactions a second per API action, 3,000 messages a second batched "
        "(SQSDeveloperGuide/troubleshooting-fifo-throttling-issues.html); $0.50 per million FIFO requests "
        "(aws.amazon.com/sqs/pricing, us-east-1); FIFO in flight 120,000 today, 20,000 in older pages "
        "(SQSDeveloperGuide/quotas-fifo.html)": ["300", "0.50", "20,000"],
    },
    "08": {
        "seed 003's sizing (100 M jobs a day, 5-minute jobs = 300 s, 32 threads, 16,000 MB, 50 MB a job, its "
        "0.1067 truncated to 0.10, its 20 machines) and the figures queuekit/capacity derives from it, each derived "
        "again by hand in capacity's tests and pinned in run_notebooks.py's EXPECTATIONS: 347,222 running, 10,851 "
        "machines (347,232 slots, about 347,000), 719 too many (6.6 %), 54 times too few, 320 jobs a machine by "
        "memory, Erlang C's 0.99997 / 0.979 / 0.99, the sample night's 5-minute peak factor 19.2 (4 of its 10 jobs in one of 48 bins: the caveat), "
        "28.9 % break-even (29 rounded), 2,315 index WCU/s, 4.6 and 0.6 times the limit with 1 and 8 shards, "
        "13 units a job of notebook 05's executor, 16 parallel Queries; 197,211 machines on the arrival process's p95 "
        "(seed 1, ExampleHistoryPeaks_Estimate's 18.17, pinned in EXPECTATIONS)": [
            "197,211",
            "300", "32", "16,000", "50", "0.1067", "0.10", "20", "347,222", "10,851", "347,232", "347,000", "719",
            "6.6", "54", "320", "0.99997", "0.979", "0.99", "19.2", "28.9", "29", "2,315", "4.6",
            "0.6", "13", "16"],
    },
    "09": {
        "the seeded study's parameters (20-minute notebook, 0.25 noise, 0.3 and 1.5 load factors, 40 and 200 nights, "
        "292 training and 73 held-out nights of 365 at 80 %) and its figures pinned in queuekit/forecast's tests "
        "(TestStudyVerdict) and EXPECTATIONS (490, 625, 644, 678, 1.3, 268, 119, 240)": [
            "20", "0.25", "0.3", "1.5", "40", "200", "292", "73", "490", "625", "644", "678", "1.3", "268", "119", "240"],
    },
    # Notebooks 00-04 (issue 35): each number with its source; the figures of the sample nights and
    # of the simulator are also printed by the cells and pinned in run_notebooks.py's EXPECTATIONS.
    "00": {"the notebook numbers of the budget table and the sessions (00-04, 05-10)": ["00", "01", "02", "03", "04", "05"],
           "the participant times, as the README's table of notebooks states them (10, 30, 20, 25, 30 min: 1 h 55 min)": [
               "20", "55"],
           "GoNB 0.11, whose %help page the cell-rules paragraph quotes; Go 1.26, which go.mod asks for and the "
           "preflight cell checks": ["0.11", "1.26"],
           "the batch window 01:00-05:00 (queuekit.Night.Window), printed by the prediction cell": ["240"]},
    "01": {"the sample nights' dates and question D's month (May 2026)": ["2026"],
           "read units section 6's table prints (half a unit for the night's eventually consistent Query)": ["0.5"],
           "an LSI's item collection: 10 GB per partition key value (developerguide/LSI.html, API CreateTable)": ["10"]},
    "02": {"the header's time, as the README's table of notebooks states it": ["20"],
           "the exercise's table of two years (730 nights); 730 hours in AWS's billing month": ["730"],
           "the dashboard cell's parameter: a read every minute, 60 × 24 × 30 = 43,200 reads a month (readsPerMonth)": [
               "60", "43,200"],
           "the item size: the study's 1 KB of padding (a parameter) plus about 0.3 KB of the job's attributes, "
           "so 2 write units an item, printed by the writes cell": ["1.3"],
           "the listed prices' arithmetic: 730 h × $0.00013 = $0.095 for one RCU a month; 730 × 3,600 s ≈ 2.6 million "
           "reads, × $0.125 per million = $0.33 on demand; 0.095 / 0.33 = 29 %": ["0.095", "2.6", "0.33", "29"]},
    "03": {"the batch window 01:00-05:00 (240 minutes); μ = 60 / mean runtime (minutes in an hour)": ["240", "60"],
           "the sample nights' figures printed by the lock-counting table (c = 3 on 2026-05-13: ρ 37.5 %, 440 of 720 "
           "worker-minutes, 61.1 % share; 2026-05-14's exclusive minutes 355), pinned in EXPECTATIONS": [
               "37.5", "440", "720", "61", "355"],
           "the steady-state cells' parameters: 200,000 customers, ρ = 0.9 and 0.95; Erlang C's Wq at ρ = 0.9, c = 3 "
           "(2.72 mean runtimes, printed by the same cell's table)": ["200,000", "0.9", "0.95", "2.7"],
           "the exercise's parameters: ρ < 0.5, a cutoff moved to 07:30 (a 390-minute window); the discussion's rule of "
           "thumb ρ = 0.7; nearest rank ⌈0.95 n⌉ is n (the longest wait) for n < 20 jobs": ["0.5", "390", "07", "0.7", "20"]},
    "04": {"nearest rank ⌈0.95 n⌉ is n for n < 20 jobs; the stable night's shortest ordinary job, 20 minutes (data/)": [
               "0.95", "20"],
           "the batch window 01:00-05:00 (240 minutes) and the pool's 3 × 240 = 720 worker-minutes": ["240", "720"],
           "the stable night's reference schedule (queuekit/sim TestReferenceScenarios, printed by the first cell and the "
           "policy table, pinned in EXPECTATIONS): mean wait 29 min, p95 50 min, the rebuild waiting from minute 60 to 75, "
           "the 50- and 35-minute exclusive jobs holding 2 × 85 = 170 worker-minutes": ["29", "50", "60", "75", "35", "85", "170"],
           "2026-05-14's exclusive minutes, printed by the sweep cell's verdict": ["355"],
           "the cells' parameters: 4,000 replications with seed 1, runtime CV 0.5 and 0.25, the per-night limits "
           "150 and 75 minutes": ["4,000", "0.5", "0.25", "150"]},
    "10": {
        "AWS billing rules, as in notebook 05: 13 write units a job on the night's key, 1,000 / 13 ≈ 77 jobs a second, "
        "250 for the pool item alone": ["13", "77", "250"],
        "parameters of the side-by-side cell: 300 fleet jobs, 50 night jobs per run": ["300", "50"],
        "the header's time, as the README's table of notebooks states it": ["35"],
        "seed 003's machines, capacity.Seed003.Plan (derived by hand in capacity's tests)": ["10,851"],
        "parameters of the throttle cell (fleetplan's limits test): S = 22, 64 workers, 16 shard items": ["22", "64", "16"],
        "fleetplan.Seed003's assumptions (docs/design/fleet.md): 32 slots an executor, 500 jobs a second a "
        "dispatcher": ["32", "500"],
    },
}


def allowed(prefix: str) -> set[str]:
    nums: set[str] = set()
    for group in (GLOBAL, PER_NOTEBOOK.get(prefix, {})):
        for values in group.values():
            nums.update(values)
    return nums

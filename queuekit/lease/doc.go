// Package lease is the night executor; the fenced-lease protocol its
// claims, heartbeats and ends follow is package fence's. It runs a night of
// the batch queue for real: stateless worker processes claim due jobs from
// DynamoDB with conditional writes, hold them under leases kept alive by
// heartbeats, and write each attempt's outcome, so that the night's real
// schedule can be read back with one Query and held against the simulator's
// forecast (package sim).
//
// The rules a night keeps across processes (at most c slots busy, an
// exclusive job alone, the dispatch policy's order, each job ending once) are
// conditions DynamoDB checks on every write. Why each holds, the items of the
// companion table, the claim transaction, fencing tokens, run fencing and what
// the one pool item costs in throughput are in docs/design/lease.md.
//
// # Running a night
//
// New(cat) makes an Executor over a catalog; its table is the catalog's name
// plus TableSuffix ("_exec"), made by CreateTable. Run prepares a night (a
// Config: the pool's c, the policy, the job-minute, lease, retries), runs
// RunConfig.Slots of its slots in this process, waits until every job has
// ended and returns a Report: the realised schedule and metrics beside the
// simulator's forecast, claims won and lost, retries and dead letters, and
// write units per job. Report.Verify checks the pool's rules on the table's
// own orders (each job's fence tokens, the pool's versions) and on the
// recorded schedule within a stated clock skew bound (Options.MaxSkew).
// Other processes give the rest of the slots with Join (the CLI's
// `queuekit worker`); Status reads a night's execution state at any time.
//
// Work is a WorkFunc (default Sleep: the job's estimated runtime on the
// night's clock). Return queuekit.Fatal(err) for a failure that no retry can fix; any
// other error is retried up to Config.MaxRetry times with backoff, then the
// job ends FATAL_FAILURE with a dead letter. An attempt whose lease expired
// is lost, not failed: it counts lost_attempts, spends no retry, and is
// bounded apart by Config.MaxLost. The work runs at least once, not
// exactly once: a holder cut off past its lease (paused, or cut off from
// DynamoDB) may have done its work before it learns, at its next write, that
// the job was taken over. Ending is exactly once. Make the work idempotent,
// or fence it where it writes: Job.Token is the attempt's fencing token,
// unique across runs (WorkToken), and a store that refuses an older token
// (package results) refuses the late holder's result too.
//
// # Time
//
// The night runs on a clock whose job-minute lasts Config.Minute of wall
// time (DefaultMinute, 50 ms: the stable night's 160 minutes in 8 s;
// time.Minute is real time). Minute 0 is when the pool starts. Leases,
// heartbeats and polls are wall-clock durations. No lease decision compares
// one host's wall clock with another's; what still does, and the skew each
// tolerates, is under Clocks in docs/design/lease.md (WithClockOffset and the
// test-only QUEUEKIT_CLOCK_OFFSET simulate skew).
//
// # Errors and limits
//
// Everything is checked before the first write. A night another run holds is
// a *BusyError naming that run's id, start, host and pid. A pool beyond
// DynamoDB's limits (more than MaxWorkers slots, job ids over MaxJobIDBytes,
// an item over MaxItemBytes or an expression over 4 KB) is a *LimitError. A
// worker whose run stopped heartbeating, or was replaced, ends with an
// *OrphanError; a coordinator whose night a newer run took while it was still
// resetting it gets a *ReplacedError; a missing night or run is a *NoNightError or *NoRunError; a
// release DynamoDB refuses because it would break the pool's counters is a
// *PoolError. The same code runs against AWS DynamoDB through the catalog's
// standard configuration.
package lease

// Package lease runs a night of the batch queue for real: stateless worker
// processes claim due jobs from DynamoDB with conditional writes, hold them
// under leases kept alive by heartbeats, and write each attempt's outcome, so
// that the night's real schedule can be read back with one Query and held
// against the simulator's forecast (package sim).
//
// # Where the state lives
//
// Execution state lives in a companion table, <catalog table>_exec
// (partition key batch_date, sort key sk), not on the catalog's items. The
// catalog is the record of what was requested; execution state is rewritten
// many times a second and reset before every run. Keeping it apart leaves
// the catalog's items, and the Query-versus-Scan studies built on them,
// untouched, and lets the companion table carry the two sparse indexes
// workers need. One night's items:
//
//	POOL                  the pool: capacity c, busy slots, the slot table, the
//	                      exclusive holder, the running jobs' estimated finishes,
//	                      a version, the night clock (t0, ms per job-minute)
//	JOB#<job_id>          execution_status, current_retry, max_retry, attempt,
//	                      the holding worker, its lease expiry and last heartbeat
//	ATTEMPT#<job_id>#<n>  one attempt: worker, slots, claimed/started/finished
//	                      times, outcome, error (the real schedule)
//	DLQ#<job_id>          the dead-letter record: attempts and last error
//	WORKER#<name>         claims won and lost, jobs finished, last seen
//
// # States (seed 003's execution_status)
//
//	NOT_STARTED ──claim──> CLAIMED ──start──> PROCESSING ──ok──> SUCCESS
//	     ▲                    │                   │
//	     │                    └──lease expired────┤
//	     │                                        ├──error, retries left──> RETRIABLE_FAILURE ──due again──> (claimable)
//	     │                                        └──fatal, or none left──> FATAL_FAILURE + DLQ#<job_id>
//
// current_retry counts retries so far; max_retry is how many are allowed, so
// a job gets at most 1 + max_retry attempts. A lease that expires counts as a
// failed attempt, exactly like an error.
//
// # Finding work: a sparse index, never a Scan
//
// A claimable job (NOT_STARTED, or RETRIABLE_FAILURE) carries claim_shard and
// due_key; claiming it removes both, so the GSI "claimable" (partition
// claim_shard, sort due_key) holds only claimable jobs. claim_shard is
// <date>#x#<priority>#<k> for exclusive jobs and <date>#o#<priority>#<k> for
// ordinary ones (k < Shards spreads a big night over partitions); due_key is
// the due minute, zero-padded, then "#"+job_id, so Query(claim_shard = s,
// due_key <= now) returns due jobs already in the dispatch order within one
// priority. Barrier reads the heads of these queries (easy, when it
// backfills, every due ordinary job); conservative reads every due job, of
// all shards, priorities and kinds, merged in dispatch order, since every
// waiting job holds a reservation. A retried job rejoins the queue at its
// retry time (its due minute), behind the jobs of its priority that were
// due before it. A held job carries lease_shard and lease_until, indexed by
// the sparse GSI "leases": expired leases are one Query(lease_until < now)
// away.
//
// # Claiming: one transaction, checked by DynamoDB
//
// A claim is one TransactWriteItems whose writes commit together or not at
// all. A worker with k free slots plans up to k starts at one instant, each
// decided on the pool as the previous ones leave it (as sim's dispatch loop
// does), and claims them in one transaction:
//
//  1. the pool: condition run_id = :run AND version = :seen AND state =
//     RUNNING AND busy <= c − w AND exclusive = "" (an exclusive claim needs
//     busy = 0), w the slots of all the jobs claimed; add w to busy, bump
//     version, record the slots and the estimated finishes;
//  2. each job: condition claim_shard = :shard AND attempt = :seen (still
//     claimable, and nobody claimed it since we read it); set CLAIMED, the
//     worker, its slots, lease_until; remove the index keys;
//  3. each job's attempt item: condition attribute_not_exists (one item per
//     attempt).
//
// A cancelled transaction (*types.TransactionCanceledException, or a
// *types.ConditionalCheckFailedException) is a lost race: counted, and the
// worker reads again. It is never an error. Each transaction carries a
// ClientRequestToken, so an SDK retry of a claim that did commit is answered
// as a success instead of looking like a lost race.
//
// # Invariants, and why they hold
//
//   - Never more than c slots busy, and an exclusive job alone: the pool
//     item's condition busy <= c − w and exclusive = "" (busy = 0 for an
//     exclusive claim) is checked by DynamoDB inside the claim's transaction,
//     whoever sends it, from whatever machine. Releases subtract exactly what
//     the claim added, in the transaction that ends the attempt.
//   - The dispatch policy and its order (priority, then arrival, then job id;
//     barrier: while an exclusive job waits nothing else starts; easy
//     (backfill): an ordinary job starts only if now + its estimate <= the
//     reservation time T, when the running jobs are estimated to drain;
//     conservative: every due job, in that order and whatever its kind,
//     reserves its slots (one, or all c) at the earliest start of
//     sim.Profile, the free-slot profile built from the pool's running
//     estimated finishes (an overdue job counts as finishing now) and the
//     reservations before it, and a job starts only if its reservation is
//     now and its slots are free, so by estimates it delays no job before
//     it): a worker decides from a consistent read of the pool at version v
//     and the claimable index, with the same rules as sim (conservative on
//     the same Profile code), and its claim commits only if the version is
//     still v. Every claim and every release bumps the version, so a decision
//     made on a state that changed fails and is made again: claims are
//     serialised through the pool item, each taken on a complete snapshot.
//     (On AWS a GSI is eventually consistent: a job made claimable a moment
//     ago may be missing from a snapshot and wait for the next poll; the
//     capacity and exclusive conditions do not depend on the index.)
//   - A job runs at most once at a time: only the holder of the current
//     attempt can heartbeat or end it (condition worker = :me AND attempt =
//     :n); a job is re-claimed only after its lease expired, and a worker
//     whose heartbeats fail stops the job's work before its lease runs out
//     (with a margin), so it never works past the lease another worker may
//     take over.
//   - Every job ends exactly once: SUCCESS and FATAL_FAILURE are written by a
//     conditional update of the current attempt, and the pool's ended counter
//     is incremented in the same transaction; the run waits for ended = jobs.
//   - The work itself runs at least once, not exactly once: an attempt whose
//     end could not be written before its lease expired (a worker cut off from
//     DynamoDB for longer than its lease) is run again by another worker. Work
//     should be idempotent, as seed 003's result written to a result_location
//     is when it overwrites.
//
// # Throughput, and what the pool item costs
//
// The pool item is the serialisation point that makes the rules global:
// every claim and every release updates it, and a claim commits only on the
// version it read. Claims are therefore made one at a time however many
// workers race; extra workers mostly lose races (each loser steps aside for a
// random part of a poll), and a worker with several free slots claims several
// jobs in one transaction to make fewer of them. On AWS one item lives in one
// partition, which
// accepts at most 1,000 write units a second; a claim and a release are two
// transactional writes of 2 units each, so one pool tops out near 250 jobs a
// second when each claim takes one job, and approaches 500 (the releases
// alone) as claims take several. Conservative backfilling also reads
// every due job at each decision, not the heads of the queues, so its reads
// grow with the queue's length. A bigger fleet splits its work over several pools (one night per
// shard of machines, say), each with its own c and rules.
//
// # Time
//
// The night runs on a clock whose job-minute lasts Config.Minute of wall
// time (50 ms by default: the stable night's 160 minutes in 8 s; one minute
// is real time). Minute 0 is when the pool starts. A job arrives at its
// requested window's minute and runs for its estimated runtime on that clock
// (a scaled sleep by default; WorkFunc plugs in real work). Leases, heartbeats
// and polls are wall-clock durations.
//
// # Workers
//
// A worker process holds no state of its own: one claimer loop reads the pool
// and the index and claims for as many slots as the process has free, each
// slot runs its job in an errgroup goroutine with its heartbeat, and a reaper
// re-queues jobs whose lease expired. More processes, on more machines,
// against the same table add slots; the same code runs against AWS DynamoDB
// through the catalog's standard configuration.
package lease

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
//	POOL                  the pool: the run that holds the night (run id, host,
//	                      pid, start, the coordinator's heartbeat), capacity c,
//	                      busy slots, the slot table, the exclusive holder, the
//	                      running jobs' estimated finishes, a version, the night
//	                      clock (t0, ms per job-minute), jobs and ended
//	JOB#<job_id>          execution_status, current_retry, max_retry, attempt,
//	                      the run id, the fencing token, the holding worker,
//	                      its lease expiry and last heartbeat
//	ATTEMPT#<job_id>#<n>  one attempt: worker, slots, claimed/started/finished
//	                      times, outcome, error (the real schedule)
//	DLQ#<job_id>          the dead-letter record: attempts and last error
//	WORKER#<name>         claims won and lost, jobs finished, late ends fenced,
//	                      the run, last seen
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
// the sparse GSI "leases": every held lease of a night is one Query away,
// and the reaper decides expiry without reading a clock off the item (see
// Clocks).
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
// as a success instead of looking like a lost race; and each claim writes
// its token as claim_nonce on the jobs it takes, so where a retry is
// refused anyway (a server that does not keep idempotency tokens, a retry
// after their ten minutes) the worker reads its own nonce in the refusal's
// old image (ReturnValuesOnConditionCheckFailure ALL_OLD) and counts the
// claim as won, not lost.
//
// # Ambiguous replies
//
// A write can land and its reply be lost; the SDK then sends it again. Each
// write of the protocol is safe to receive twice: a start is accepted when
// the job is CLAIMED or already PROCESSING since this very start
// (started_ms); a heartbeat sets lease_until (the same value twice); an end
// writes end_nonce and, refused by its own earlier landing (the token it
// moved on), recognises its nonce and counts as ended, not fenced; a join
// creates the worker's WORKER# item with a nonce in the same transaction as
// the pool's joined count, so the count is added once; WORKER# counters are
// SET to the process's totals, never ADDed; the reset's transactions carry
// idempotency tokens; and the prepare's WAITING write accepts WAITING.
//
// # Fencing tokens: a lease that can be taken away
//
// A lease is a promise with a deadline, and a holder cannot tell that the
// deadline has passed while it was not running: a GC pause, a laptop lid, a
// VM migration or a SIGSTOP stops its clock-watching as well as its work.
// So every JOB item carries a fencing token (package fence), a number that
// moves on each time the job's lease changes hands: the claim sets it to
// token+1 (conditioned on the token it read), the holder's end and the
// reaper's take-over each move it on again. Every write of a holder (start,
// heartbeat, end) is conditioned on token = the token its claim set, worker
// = its name, and run_id = the run it joined. A holder that slept through
// its lease therefore learns it at its next write: DynamoDB refuses the
// write, the worker stops the work's context (fence.Keep cancels it with
// the loss as cause as soon as a heartbeat is refused, or when no heartbeat
// got through before the lease's end less a quarter lease), and changes
// nothing. Its late end is counted (WorkerStats.Fenced, WORKER#.fenced)
// and logged as fenced, never a second end. A heartbeat that came due while
// the work finished is still sent (fence.Keeper.Stop), and a worker that
// lost its lease still sends its end: the storage, not the worker's
// belief, decides whether the end lands.
//
// # Run fencing
//
// A run takes the night with one conditional PutItem of the POOL item
// (state PREPARING, a new run id, its host, pid and start), accepted only if
// the night has no pool, its run is over (DONE or ABANDONED), or its
// coordinator has not heartbeaten for StaleAfter. Of two runs started at
// the same instant exactly one write succeeds; the other is refused with a
// *BusyError naming the run that holds the night, when it started and which
// host and pid hold it. Everything is validated before that write (the
// configuration, the night, the limits), and nothing of the previous run is
// deleted until after it. Every write of a worker names the run it joined
// (a condition on the pool's or the job's run_id, or a ConditionCheck of
// the pool for its counters), so from the moment a new run holds the night
// no write of an older run's worker can touch it. The reset itself is fenced
// the same way: its puts and deletes go in TransactWriteItems of ResetChunk
// items, each with a ConditionCheck that the pool is still this run's and
// PREPARING, and it runs under the pool heartbeat's context; a coordinator
// paused in the middle of its reset past StaleAfter, resumed after a newer
// run took the night, has every remaining write refused (a *ReplacedError)
// instead of overwriting the newer run's jobs. (Transactional writes cost
// two write units an item where BatchWriteItem costs one.) Fencing tokens
// never restart: a reset carries each job's token on (old + 1), so a token
// handed to the work (Job.Token) in one run is older than every token of
// the next. The coordinator heartbeats
// the pool (run_seen_ms) about once a second; a worker that sees the
// heartbeat unchanged for StaleAfter on its own clock, or the run abandoned
// or replaced, exits with one line (an *OrphanError).
//
// # Invariants, and why they hold
//
//   - Never more than c slots busy, and an exclusive job alone: the pool
//     item's condition busy <= c − w and exclusive = "" (busy = 0 for an
//     exclusive claim) is checked by DynamoDB inside the claim's transaction,
//     whoever sends it, from whatever machine. Releases subtract exactly what
//     the claim added, in the transaction that ends the attempt, under
//     conditions of their own: busy >= w, the slots (or the exclusive mark)
//     still the job's, so busy stays within 0..c even if a bug elsewhere
//     sent a release twice: DynamoDB refuses it (a *PoolError) instead of
//     corrupting the pool.
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
//   - Only one holder's writes land: a claim is conditioned on the token it
//     read and moves it on, so of two claims read at one token at most one
//     commits; the reaper takes a lease over only if the token and the lease
//     end it read are unchanged (a heartbeat that arrives first wins) and
//     moves the token on; every holder write is conditioned on its token.
//     Whatever the timing, at most one process can write as the job's
//     holder. The model check in model_test.go drives claim, start,
//     heartbeat, end and reaper steps of two holders over thousands of
//     interleavings against a store with these conditions and checks the
//     invariants after each step; the same check finds the double end of
//     the protocol without tokens.
//   - Every job ends exactly once: SUCCESS and FATAL_FAILURE are written by a
//     fenced update of the current tenure, the pool's ended counter is
//     incremented in the same transaction under the condition ended < jobs;
//     a late end is refused, not applied. The run waits for ended = jobs,
//     then checks the night it reads back (Report.Verify: each job's
//     attempts 1..k with one end, at most 1 + max_retry, busy within 0..c on
//     the recorded schedule, exclusive alone, the pool clean) and exits 0
//     only if all of it holds.
//   - The work itself runs at least once, not exactly once: a holder cut off
//     past its lease (paused, or cut off from DynamoDB) may have done its
//     work, or part of it, before it learns at its next write that the job
//     was taken over, and another worker runs it again. Ending is exactly
//     once; the work is at least once. Work should be idempotent, as seed
//     003's result written to a result_location is when it overwrites.
//
// # Limits
//
// The pool is one item, and an item holds at most 400 KB: a slot entry and,
// when the pool is full, a running entry per slot. Config.Validate refuses
// c > MaxWorkers (2,000, which fits with job ids up to 64 bytes), and
// Prepare checks the night's own ids and the largest claim's expressions
// (4 KB each) before anything is written (a *LimitError). An exclusive
// claim marks the pool once (exclusive = job, busy = c) rather than naming
// every slot, so no expression grows with c. A worker asking for more slots
// than the pool has is refused before it joins.
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
// # Clocks
//
// No decision about a lease compares one host's wall clock with another's
// (the DynamoDB lock client's rule). lease_until is written by the holder
// on its own clock and read by others only as a version: a reaper revokes
// a lease when it has seen the same (fence_token, lease_until) for a whole
// lease on its own monotonic clock, with the condition that both are still
// the item's, so a holder whose heartbeats land is never reaped, however
// far its clock or the reaper's is off; a holder times its own lease from
// its own send times (fence.Keep). Only the clocks' rates must agree (a
// lease of 2 s tolerates any realistic drift). What still reads a wall
// clock written by another host, and the bound each gives (s = the skew
// between two hosts; Options.ClockOffset and the test-only
// QUEUEKIT_CLOCK_OFFSET simulate it):
//
//   - taking a night whose coordinator went silent compares run_seen_ms
//     with the new coordinator's clock: a new coordinator ahead by more
//     than StaleAfter less the heartbeat period (about 9 s) takes a live
//     night, whose run is then replaced (its writes refused, nothing
//     corrupted, but the live run stops); within that bound it is told
//     the night is busy (TestSkewBoundTakeNight shows both sides);
//   - a worker joining a run checks the same heartbeat's age: a worker
//     ahead by more than about 9 s does not join a live run (NoRunError);
//   - the night's clock (the minute jobs become due, and the minutes an
//     attempt records) is each process's wall clock against the pool's t0:
//     a worker off by s decides and records s/Minute job-minutes off. Its
//     leases are unaffected; the recorded schedule is shifted.
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

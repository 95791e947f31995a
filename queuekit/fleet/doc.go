// Package fleet is seed 003's executor at its own scale: many independent
// jobs (100 M a day is 1,157 a second) run by a fleet of stateless worker
// processes that claim due jobs from one DynamoDB table with one conditional
// UpdateItem each, hold them under fenced leases (package fence), and own
// shards of the work through fenced leases on shard items, so that workers
// rarely race for the same job. There is no fleet-wide item and no
// transaction on the hot path: every write touches one job or one shard.
//
// The night executor (package lease) is the other tool: it enforces a pool
// of c slots, exclusive locks and a dispatch order through one pool item, so
// its claims are serialised. The fleet gives those rules up (jobs are
// independent) and scales with shards instead.
//
// # Items (table <catalog>_fleet, partition key pk, sort key sk)
//
//	USER#<user_id>  JOB#<job_id>    a job: seed 003's attributes (user_id,
//	                                job_id, job_type,
//	                                scheduled_job_execution_time, job_priority,
//	                                result_location, execution_status,
//	                                current_retry, max_retry, job_interval),
//	                                its shard, attempt, and its lease
//	                                (fence_token, holder, lease_until)
//	DLQ             <user>#<job>    a dead letter: the job, attempts, last error
//	SHARD           <k, 4 digits>   shard k's owner lease (fence_token, holder,
//	                                lease_until), a want (wanted_by,
//	                                want_load) and its last HistoryMax
//	                                ownership changes (history)
//	MEMBER          <worker name>   a worker's membership lease (lease_until)
//	                                and its TTL (expires_at); no worker
//	                                reads it
//
// listAllJobs(user_id) is one Query on the table's own key (pk =
// USER#<user_id>, sk begins_with JOB#), never a Scan; viewJob(user_id,
// job_id) is one GetItem.
//
// # The due index: sparse, (shard, when claimable)
//
// The global secondary index "due" has partition key claim_shard (N, the
// job's shard, 0 <= k < K, from a hash of its ids) and sort key due_at (N,
// Unix milliseconds). Only jobs that can still be claimed carry these two
// attributes: a job that ended (SUCCESS, FATAL_FAILURE) loses them and
// leaves the index, so the index holds only unfinished jobs, and the Query
//
//	claim_shard = :k AND due_at <= :now
//
// returns exactly the jobs of shard k that are claimable now, oldest first.
// A job's due_at is the moment it becomes claimable: its
// scheduled_job_execution_time when submitted (or re-scheduled by a
// recurring run), its retry time after a failure, and while it is held, the
// end of its lease. So a held job is not returned while its lease lasts, and
// a job whose holder died becomes claimable again the moment its lease ends,
// with no reaper and no second index. (On AWS a changed index key costs two
// index writes; a heartbeat moves it, so heartbeats cost index writes.)
//
// # Claim: one conditional UpdateItem
//
// A worker claims a free job (NOT_STARTED, RETRIABLE_FAILURE) it read from
// the index with one UpdateItem on the job, condition
//
//	fence_token = :seen AND due_at <= :now AND attribute_exists(claim_shard)
//
// (the job is still as it was read and still claimable), which moves the
// fencing token on (fence.Acquire), names the holder, sets CLAIMED,
// lease_until = due_at = now + lease, op_nonce, and adds one to attempt. A
// job read while held (CLAIMED or PROCESSING) is claimed only after the
// worker has seen its (fence_token, lease_until) unchanged for a whole lease
// on its own clock, or its lease_until is MaxSkew past on the worker's
// wall clock (see Clocks), with the condition
//
//	fence_token = :seen AND lease_until = :seen_until AND attribute_exists(claim_shard)
//
// (see Clocks). A refused claim is a lost race: counted, never an error.
// Taking over a held job means its lease expired: that attempt failed, so
// the claim also adds one to current_retry, and a job with no retries left
// is ended FATAL_FAILURE instead (see below).
//
// The holder's lease clock starts when the claim is sent, not when its
// reply comes back: a claim that took long (SDK retries, a slow server)
// leaves its holder less lease, never more than DynamoDB granted.
//
// # Holding, heartbeats, ending
//
// While the work runs, fence.Keep renews the lease every lease/4 (condition:
// fence_token and holder still ours; sets lease_until = due_at = now + lease,
// and PROCESSING). A worker whose heartbeat is refused, or cannot get one
// through before its lease (less a margin) runs out, has its work cancelled.
// The end is one UpdateItem under the same fencing condition that releases
// the lease (the token moves on) and writes:
//
//   - success, one-off job: SUCCESS, and the index keys removed;
//   - success, recurring job (job_interval > 0 seconds, until repeat_until):
//     NOT_STARTED with scheduled_job_execution_time and due_at moved on by
//     one interval (from the previous schedule, not from now, so the job fires
//     once per interval and does not drift), runs + 1, current_retry 0: the
//     write that ends one run schedules the next;
//   - failure with retries left: RETRIABLE_FAILURE, current_retry + 1, and
//     due_at = now + a backoff of RetryBase·2^retry (capped at RetryMax,
//     with full jitter);
//   - failure with none left (or a fatal error): FATAL_FAILURE, in one
//     TransactWriteItems with the put of the DLQ item, so a dead letter
//     exists exactly when the job is FATAL_FAILURE. This rare path is the
//     only transaction.
//
// Every end also adds one to ends, so "ended exactly once" can be read back:
// ends = 1 on every finished one-off job (runs on a recurring one).
//
// A recurring job whose schedule cannot be read (not RFC 3339, or outside
// the years 2000 to 9999) is never rescheduled from it: Validate refuses it
// at submission (the CLI exits 2), and one written by other means is ended
// FATAL_FAILURE with the reason, instead of firing in a hot loop.
//
// # Lost replies
//
// A write whose reply is lost is retried by the SDK; if its first try had
// committed, the retry is refused by the write's own effect (the token has
// moved). Every claim, end, shard acquire and shard release therefore
// writes a random op_nonce, and asks for the refusing item
// (ReturnValuesOnConditionCheckFailure ALL_OLD): a refusal whose item
// carries the write's own nonce is recognised as the write having landed
// (Stats.Landed), not as a lost race or a fence. A heartbeat's retry is
// harmless (same condition, same values), the dead-letter transaction's
// retry is idempotent (the SDK sends one ClientRequestToken for all its
// tries), and the counters on job items (attempt, ends, runs) are changed
// only by these conditional writes, so a retry never counts twice. A
// worker's Stats are its own process's counters, not written to DynamoDB.
//
// When every try of a call gets no answer (the SDK's attempts spent on
// lost replies or a slow server, or DynamoDB away), the write may or may
// not have landed: a claim is counted in Stats.ClaimErrors, an end in
// Stats.EndErrors; a claim that landed unseen, or an end that did not
// land, leaves a lease nobody renews, and the job comes back when it ends.
// A worker rides such calls out, as it rides
// out an outage: it never exits on them.
//
// # Shard ownership
//
// The K shard items are leased like jobs, with the same fence: a worker
// owns shard k while it holds the lease on SHARD/k, renewed every
// ShardLease/4, and released (token moved on) when the worker gives it up.
// The release is conditioned on the token and holder, not the lease's end,
// so a shard whose keeper gave up (its renewals went unanswered, though
// they may have landed) is released too, when the worker notices and when
// it leaves, unless another worker took it since; a release with no answer
// is sent again for up to a ShardLease. A worker that has left holds none.
// Every ShardLease/4 each worker reads the K shard items with one Query
// (its only control-plane read: O(K), nothing per other worker) and:
//
//   - counts the live owners (holders whose (token, lease_until) changed
//     within the last ShardLease on its own clock), itself included: n, and
//     target = ceil(K/n);
//   - gives back shards above target, and a shard whose want names a
//     worker owning at least two fewer;
//   - takes free shards (nobody holds them) and stale ones (seen unchanged
//     for a ShardLease: condition fence_token and lease_until as seen) up to
//     target, starting at an offset of its own so that workers do not race
//     for one shard;
//   - with none to take and an owner two or more above it, marks one of
//     that owner's shards wanted (wanted_by, want_load; the lease does not
//     move): the owner gives it back at its next look, and the taker's
//     acquire clears the want.
//
// So shards change hands only by release or expiry, never by force, and
// the fleet settles with every owner at floor(K/n) or ceil(K/n). With more
// workers than shards, K workers own one each and the others wait for one
// to come free. A worker polls only the shards it owns; WithPollAll makes
// every worker poll every shard instead, without ownership, for comparison.
//
// Each acquire rewrites the shard's history as its last HistoryMax-1
// entries plus its own (token, holder, operation, time, and the lease end
// it took over); a release appends one. So a shard item stays under about
// 1 KB (fleetplan.ShardItemBytes) and a renewal costs one write unit, where
// the unbounded history it had before issue 25 made every renewal pay for the
// whole item.
//
// MEMBER items remain as a registry of who runs (joined, renewed with the
// shard leases, deleted when a worker leaves), each with a TTL attribute
// (expires_at, MemberTTL after its last renewal; Reset enables TTL on the
// table), so the items that killed workers leave behind are deleted by
// DynamoDB's TTL sweep. No worker reads them: nothing depends on stale
// members, and membership cost does not grow with crashes.
//
// Ownership is for throughput, not safety: a job's own fencing makes every
// claim and every end safe whoever polls. Jobs in flight when a shard
// changes hands keep running under their own leases.
//
// # Control-plane cost
//
// fleetplan.ControlPlaneCost computes, for N workers and K shards, the
// requests, read and write units and on-demand dollars per hour of the
// above: per worker per rebalance one Query of K items
// (ceil(K·fleetplan.ShardItemBytes/4 KB) strongly consistent read units),
// plus K shard and N member renewals every ShardLease/4. A test measures it with in-process workers (4 and 24 on K =
// 16): every rebalance is one Query whose reported read units are within
// the formula's at both sizes, and the writes within its renewals plus the
// changes the workers counted.
//
// Both terms grow with N: at seed 003's 10,851 workers and 1,000 shards
// the shard Queries are about 1.47 M read units a second on the one key pk
// = SHARD and the member renewals 7,234 write units a second on pk =
// MEMBER, against a partition's 3,000 and 1,000. So this fleet is for a
// laptop or a few dozen workers; at seed 003's size the shard protocol
// belongs to a few dispatchers that hand due jobs to executors through SQS
// (docs/design/fleet.md; package fleetplan sizes both designs, key by key).
// Package dispatch runs that design on this package's protocol: a
// dispatcher (Fleet.Dispatch, DispatcherConfig) is the other component over
// shard ownership, beside the worker (Fleet.Join): it owns shards as a
// worker does and hands the due jobs it reads to a queue instead of
// claiming them; an executor claims what it receives with Claim and runs it
// with Attempt.Run, the same claim-run-end path a worker runs.
//
// # Clocks
//
// A lease end (lease_until, and due_at while held) is written by the
// holder's clock. A lease read held (job or shard) is taken over at the
// first of two moments, and the takeover's condition checks the pair
// (fence_token, lease_until) unchanged either way:
//
//   - the watch: the taker has seen the same pair for a whole lease on its
//     own monotonic clock. No clock of another host is compared with its
//     own; a live holder renews every lease/4, changing lease_until, so it
//     is never taken over this way, whatever the clocks say;
//   - the lease's own end: lease_until is MaxSkew (Options.MaxSkew, default
//     1 s; 0 turns this off) past on the taker's wall clock. The watch
//     alone belongs to the worker that watches: a shard's new owner starts
//     it again, so owners that change faster than a lease (killed,
//     rejoining under lost replies) postpone a takeover without bound
//     (TestTakeoverIsBoundedWhileShardsChangeHands: with the watch alone,
//     10 of 24 jobs were still held by dead executors after 121 s). With
//     clocks within MaxSkew of each other, a lease this far past its end has
//     ended on the holder's clock too, and the holder stopped its work a
//     margin (lease/4) before that. Clocks further apart than MaxSkew plus
//     that margin can take a lease from a holder still renewing it: never a
//     second end (the claim and the end are fenced), but the work runs again
//     and the lost attempt counts towards MaxLost. MaxSkew is a bound the
//     operator states (NTP and the Amazon Time Sync Service keep hosts far
//     closer than 1 s); with none to state, set it to 0.
//
// A holder's own lease is counted on its monotonic clock from the moment
// its grant or renewal was sent.
//
// What clock offsets still do (TestSkewedClocksRevokeNoHealthyJob runs
// workers ±MaxSkew/2 off, and with MaxSkew 0 ±lease/2 and ±2·lease off,
// QUEUEKIT_CLOCK_OFFSET, test-only):
//
//   - due times are wall-clock times: a worker whose clock is s ahead claims
//     scheduled and retry-delayed jobs up to s early; one s behind, up to s
//     late; and a held job whose holder died becomes visible to a worker s
//     behind s later than to others (then it still waits MaxSkew, or its
//     lease). This is timing, never a second holder, and no bound on s is
//     needed for safety; bound it (NTP) for punctuality;
//   - offsets beyond MaxSkew (plus the holder's margin) take leases from
//     live holders, as above: work runs again, nothing ends twice;
//   - with MaxSkew 0, the bound that remains is on clock rates, not
//     offsets: a taker waits one lease on its own clock while the holder
//     stops its work a margin (lease/4) before its lease ends on its own
//     clock, so their rates may differ by less than a quarter (far beyond
//     any real drift).
//
// # What runs once
//
// Every end is fenced, so each job ends exactly once (per run, for a
// recurring job). The work itself runs at least once: a worker killed after
// its work finished but before its end was written leaves the job to be
// claimed again when its lease ends.
package fleet

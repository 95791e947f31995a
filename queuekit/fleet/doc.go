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
//	                                lease_until) and its ownership history
//	MEMBER          <worker name>   a worker's membership lease (lease_until)
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
// A worker claims a job it read from the index with one UpdateItem on the
// job, condition
//
//	fence_token = :seen AND due_at <= :now AND attribute_exists(claim_shard)
//
// (the job is still as it was read, still claimable, and its lease, if any,
// has ended), which moves the fencing token on (fence.Acquire), names the
// holder, sets CLAIMED, lease_until = due_at = now + lease, and adds one to
// attempt. A refused claim is a lost race: counted, never an error. When the
// job read was held (CLAIMED or PROCESSING) its lease expired: that attempt
// failed, so the claim also adds one to current_retry, and a job with no
// retries left is ended FATAL_FAILURE instead (see below).
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
// # Shard ownership
//
// The K shard items are leased like jobs, with the same fence: a worker
// owns shard k while it holds the lease on SHARD/k, acquired by a
// conditional write at the token it read (free, or its lease ended),
// renewed every ShardLease/4, and released (token moved on) when the worker
// gives it up. Each acquire and release appends an entry (token, holder,
// operation, time, and for an acquire the lease end it took over) to the
// item's history list, so the ownership history can be checked: tokens in
// order, and every acquire of a shard that was held happened after that
// lease had ended.
//
// Workers find each other through MEMBER items, each a lease renewed with
// the shard leases. Every worker computes the same assignment from the live
// members sorted by name (shard k goes to member k mod n), releases shards
// that are no longer its own, and acquires its shards as they come free or
// their leases end. A worker that joins gets its shards after their owners'
// next rebalance; a worker that dies loses them after its leases end. A worker
// polls only the shards it owns; WithPollAll makes every worker poll every
// shard instead, without ownership, for comparison.
//
// Ownership is for throughput, not safety: a job's own fencing makes every
// claim and every end safe whoever polls. Jobs in flight when a shard
// changes hands keep running under their own leases.
//
// # What runs once
//
// Every end is fenced, so each job ends exactly once (per run, for a
// recurring job). The work itself runs at least once: a worker killed after
// its work finished but before its end was written leaves the job to be
// claimed again when its lease ends.
package fleet

// Package fleetplan sizes seed 003's fleet on AWS and proves, on paper, that
// every partition key and every table stays under DynamoDB's limits: the
// two-tier design of docs/design/fleet.md (a few dispatchers own the due
// index's shards and hand due jobs to executors through SQS), and the
// one-tier fleet it replaces (package fleet today: every worker owns
// shards and reads the shard items), expressed in the same rows so that the
// two can be compared; the one-tier fleet's own costs (ControlPlaneCost
// for its shard protocol, Project for its job lifecycle at seed 003's day
// through package capacity). The package holds formulas and prices only;
// the protocols are package fleet's, and fleet imports neither this
// package nor capacity (a test checks it).
//
// # Inputs
//
// A fleet of N executors serves J jobs a day, λ = J / 86,400 jobs a second,
// each holding one of an executor's T slots (seed 003: 32 threads) for W
// seconds (300). Assumptions holds every other constant, each with the
// reason for its value; Seed003 is the set the CLI uses.
//
// # Per job
//
// A job's lease is L (JobLease) and its holder renews it every L/4, the
// fence.Keep protocol of package fleet, so a job of W seconds sends
//
//	h = max(0, ⌈W / (L/4)⌉ − 1)
//
// heartbeats (none for a job shorter than L/4). With item size B (1 KB)
// and due-index entry size E (the index projects the keys, fence_token
// and lease_until: about 200 B), one write costs ⌈B/1 KB⌉ table units and
// ⌈E/1 KB⌉ index units. The job item is written at submit, at the
// executor's claim, by each heartbeat and at the end:
//
//	table write units per job = (3 + h) · ⌈B/1 KB⌉
//
// and the due index gets a put at submit (1), a moved key at the claim and
// at every heartbeat (due_at becomes the lease's end: 2 each, AWS bills a
// changed index key as a delete and a put) and a delete at the end (1):
//
//	index write units per job = (4 + 2h) · ⌈E/1 KB⌉
//
// Reads: StatusReads eventually consistent GetItems a job (the user's
// viewJob), ½ unit each per 4 KB.
//
// # Two tiers
//
// Tables. The per-table quota (40,000 read and 40,000 write units a second
// by default, for the table and for each index) is used up to
// QuotaUtilization U_q (0.8). The jobs are split by a hash of user_id over
//
//	C = max(1, ⌈λ·max(table WU, index WU, RU per job) / (40,000·U_q)⌉)
//
// cells, each a table with its due index, its dispatchers and its SQS
// queue, serving λ_c = λ/C; a user's jobs live in one cell, so listAllJobs
// stays one Query. C above MaxTables is a LimitError.
//
// Dispatchers. One dispatcher hands off DispatcherJobsPerSecond R jobs a
// second (an assumption until the runtime tier is measured) at utilisation
// U_q, and a cell keeps at least MinDispatchers for availability:
//
//	D_c = max(MinDispatchers, ⌈λ_c / (R·U_q)⌉),   D = C·D_c.
//
// Shards. Each shard is one partition key of the due index; a key may share
// a partition with another, so a key is loaded to KeyUtilization U_k (0.5)
// of a partition's 1,000 write and 3,000 read units; every dispatcher owns
// ShardsPerDispatcher shards or more, so a dead one's share spreads:
//
//	K_c = max(ShardsPerDispatcher·D_c, ⌈λ_c·index WU / (1,000·U_k)⌉, ⌈λ_c / (P·M·U_k)⌉)
//
// where a dispatcher polls each owned shard P times a second (1 /
// DispatchPoll) with one Query page of at most M entries (PollPage), so a
// shard hands off at most P·M jobs a second and its key reads
//
//	P · ½ · ⌈M·E / 4 KB⌉ read units a second (a full page every poll: the bound).
//
// Control plane. The D_c dispatchers of a cell run package fleet's shard
// protocol among themselves (ControlPlaneCost with N = D_c, K = K_c):
// each reads the K_c shard items once per ShardLease/4 (strongly
// consistent, ⌈K_c·ShardItemBytes / 4 KB⌉ units), and renews its
// owned shards and its membership as often. So pk = SHARD reads D_c times,
// not N times, and pk = MEMBER holds D_c items, not N: executors have no
// membership item; an executor's liveness is its job's lease.
//
// Executors and SQS (standard queue, one per cell). An executor long-polls
// (ReceiveWait, 20 s), claims each job it receives with one fenced
// conditional UpdateItem, deletes the messages, runs the work. A queue's
// requests a second are at most
//
//	sends λ_c / b (b = min(SQSBatch, max(1, λ_c/(K_c·P))): a poll's due jobs of one shard per SendMessageBatch)
//	receives λ_c + N_c / ReceiveWait (each non-empty receive takes a message; an empty one waits ReceiveWait)
//	deletes λ_c (one DeleteMessageBatch per non-empty receive at most)
//
// with N_c = N/C executors a cell. A message is in flight from its receive
// to its delete after the claim, at most the visibility timeout V; the
// queue's in-flight messages are bounded by λ_c·V against SQS's 120,000.
//
// Users. One user's jobs share one partition key (USER#user_id): the API
// admits at most MaxUserJobsPerSecond per user (a usage plan), so that key
// takes at most that rate times the table write units per job.
//
// Executors. Little's law: λ·W jobs run at once, so N·T < λ·W slots is a
// LimitError (the executors cannot serve the rate, whatever the database).
//
// # One tier
//
// The fleet of package fleet with N workers and K shards: every worker
// reads the K shard items each ShardLease/4 and renews its MEMBER item as
// often (ControlPlaneCost), the owners poll their shards every Poll
// (an idle poll of an empty shard: ½ unit), and the job's writes are the
// same as above. Its rows are computed, never refused: Violations lists the
// rows over a limit.
//
// # Dollars a day
//
// On demand, from the average rates: read units · 86,400 · the price per
// read unit, the same for writes, plus SQS requests · 86,400 · the price
// per request (standard queue, free tier not subtracted), prices.Table2026.
package fleetplan

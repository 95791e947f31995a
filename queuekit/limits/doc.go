// Package limits is a layer between DynamoDB clients and DynamoDB Local
// that throttles as AWS does, so that the workshop's capacity lessons are
// measured, not asserted. DynamoDB Local has no partitions, no capacity
// modes, no quotas and no transaction conflicts (it serialises
// transactions); the layer is an HTTP reverse proxy (net/http/httputil)
// speaking DynamoDB's JSON protocol: it reads X-Amz-Target and the parts
// of the body it needs, answers a throttled request itself, and passes
// every other request to DynamoDB Local unchanged and its answer back byte
// for byte. A client reaches it by its endpoint and needs no code change.
//
// Start one in-process (a notebook) or with `queuekit limits --listen
// HOST:PORT --target URL [--scale S] [--json-stats PATH]`:
//
//	s, err := limits.Start(ctx, "http://127.0.0.1:8000", "", limits.WithScale(20))
//	// give s.URL to the client as its endpoint; s.Stats() is the counters
//
// # The rules, each from AWS's documentation
//
//   - Partitions. An item maps to a partition by a hash of its partition
//     key; a partition serves at most 1,000 write and 3,000 read units a
//     second, for the table and for each GSI separately, a GSI partitioned
//     by the index's key ("Understanding DynamoDB warm throughput in
//     different scenarios",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html;
//     "Key range throughput exceeded",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-key-range-limit-exceeded-mitigation.html,
//     which also says reads and writes throttle independently, as modelled).
//     The number of partitions is the smallest that serves the table's warm
//     throughput within those limits: ceil(max(write/1,000, read/3,000)).
//     AWS no longer documents a partition formula; this is the least
//     count consistent with the documented warm throughput and per-partition
//     limits, and it ignores table size (10 GB per partition). Partitions
//     never merge. Split for heat (DynamoDB splitting a hot partition by
//     its sort key range) is not modelled: AWS does not document when or
//     how it happens, so one partition key value here never exceeds one
//     partition's limits; on AWS a key whose items differ in sort key may
//     get more after a split, one item never does.
//   - Provisioned mode: the table's (and each GSI's) read and write
//     capacity per second, with burst capacity of up to 300 seconds of
//     unused capacity ("DynamoDB currently retains up to 5 minutes (300
//     seconds) of unused read and write capacity", Burst capacity,
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/burst-adaptive-capacity.html);
//     burst never lifts a partition's limit. A new table starts with one
//     second of capacity, not a full burst.
//   - On-demand mode: a new table or GSI serves 4,000 write and 12,000
//     read units a second at first (its warm throughput; DynamoDB on-demand
//     capacity mode, "Initial throughput and scaling properties",
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/on-demand-capacity-mode.html),
//     or the WarmThroughput its CreateTable or UpdateTable asked for; it
//     may throttle when traffic exceeds twice the previous peak within 30
//     minutes (Pre-warming,
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/pre-warming-on-demand-capacity-mode.html).
//     Modelled strictly: the table's partitions are those of the larger of
//     its warm throughput and twice the highest second of consumption at
//     least 30 minutes old; the throttle is the partitions' (a
//     KeyRangeThroughputExceeded), which is how AWS's guides describe a
//     spike on a table that has not scaled. A table switched to on demand
//     starts with its previous provisioned throughput (previous peak = half
//     of it, same page). The per-table quota, 40,000 read and 40,000 write
//     units a second by default (Service quotas,
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#default-limits-throughput),
//     throttles with ...AccountLimitExceeded, and OnDemandThroughput's
//     MaxReadRequestUnits / MaxWriteRequestUnits with
//     ...MaxOnDemandThroughputExceeded
//     (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/throttling-ondemand-capacity-exceeded-mitigation.html).
//   - Units, as DynamoDB computes them (DynamoDB read and write operations,
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html):
//     an item's size by the project's one implementation of the size rules
//     (dynamo.ItemSize), 1 KB per write unit, 4 KB per read unit, half for
//     an eventually consistent read; a PutItem or UpdateItem counts the
//     larger of the item before and after, a DeleteItem the item deleted, a
//     failed condition the item as it is; Query and Scan the returned items'
//     total rounded up once; transactions twice (Transactions, capacity,
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling);
//     a GSI write a put of the new entry, a delete of the old one, both when
//     the index key changes, nothing when the entry is unchanged
//     (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.Writes).
//     The tests check these against DynamoDB Local's own ConsumedCapacity.
//     To know an item's size before and after, the layer keeps the image of
//     every item written through it; for a table it did not see created it
//     reads an item once (GetItem, not metered) before its first write, and
//     an UpdateItem is forwarded with ReturnValues ALL_NEW (cut from the
//     answer again) when the client asked for none.
//   - Throttling answered as AWS answers it: HTTP 400,
//     ProvisionedThroughputExceededException (partition and provisioned
//     reasons) or ThrottlingException (account quota and on-demand maximum)
//     with the ThrottlingReasons list, each a reason
//     (Table|Index + Read|Write + the limit) and the table's or index's ARN
//     (API_ThrottlingReason,
//     https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_ThrottlingReason.html).
//     The docs do not say which exception goes with which reason; this
//     split is the layer's choice. A GSI out of capacity throttles the
//     table's write (back-pressure). BatchWriteItem and BatchGetItem return
//     the throttled items as UnprocessedItems / UnprocessedKeys and fail
//     only when none is admitted; a transaction out of capacity is a
//     TransactionCanceledException with ThrottlingError for the throttled
//     items (the exception's documented cancellation reasons).
//   - Transaction conflicts (Transaction conflict handling,
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling):
//     a TransactWriteItems or TransactGetItems with an item that another
//     write in flight through the layer holds is cancelled
//     (TransactionCanceledException, TransactionConflict for that item); a
//     PutItem, UpdateItem or DeleteItem of an item an in-flight transaction
//     holds fails with TransactionConflictException. WithTransactionHold
//     widens the window. BatchWriteItem items are not checked for conflicts.
//   - ReturnConsumedCapacity: DynamoDB Local answers it (the units match
//     the layer's, as the tests check); a throttled request reports none,
//     as on AWS.
//
// Not modelled: split for heat, adaptive capacity beyond "a partition
// serves 1,000/3,000", table size, the account-level (all tables)
// quotas of provisioned mode, PartiQL and the control plane's own rates.
// A Query or Scan with a FilterExpression is charged on the items it
// returns (AWS charges the items read before the filter).
//
// # The time scale S
//
// Every limit (partition, provisioned, burst, warm throughput, quota,
// on-demand maximum) is divided by S, so that a laptop serving a few
// hundred calls a second reaches them; time is not scaled (a second is a
// second, burst keeps 300 of them, on-demand's window is 30 minutes).
// Units consumed are DynamoDB's, not divided. So a throttled figure (calls
// a second at which a key throttles, throughput a table reaches) is an AWS
// figure divided by S; ratios (how far over a partition a key is, how many
// shards lift it, the partition count) do not depend on S.
//
// # Counters
//
// Stats returns CloudWatch-like counters: per second, per table, index and
// partition, the units consumed, the requests and the throttled requests
// by reason (and TransactionConflict); Totals sums a table's or index's.
package limits

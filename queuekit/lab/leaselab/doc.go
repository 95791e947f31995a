// Package leaselab holds the lease demonstrations of notebooks 04, 05 and 10:
// the claim race of executors, the night run with leases and heartbeats, a
// worker that sleeps through its lease, lost replies and skewed clocks, the
// poll sweep, the pool ceiling and the shard takeover, with the arithmetic of
// a lease (Lease) and the rows and sentences the cells print.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package leaselab

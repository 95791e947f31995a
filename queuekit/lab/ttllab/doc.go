// Package ttllab is notebook 06's arithmetic of timers: which jobs a TTL
// timer, a scheduler or a delay queue serves, the TTL sweep's batches, and the
// self-check of a timer plan.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package ttllab

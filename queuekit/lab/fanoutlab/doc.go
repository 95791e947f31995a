// Package fanoutlab holds notebook 06's and 07's SQS demonstrations: the
// workshop's queues, the fan-out of a night into slices, FIFO groups and
// batches, and retries with jitter.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package fanoutlab

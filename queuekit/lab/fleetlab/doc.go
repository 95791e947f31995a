// Package fleetlab holds notebook 10's fleet demonstrations: the fleet's
// design checked and priced, the fleet on the limits layer against shard
// counts, the peak start and the control plane.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package fleetlab

// Package simlab holds notebook 04's target for a worker count, judged on a
// Monte Carlo sweep of the simulator.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package simlab

// Package scanlab is notebook 02's demonstration: Query against Scan over
// growing tables, the read units and the time of each.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package scanlab

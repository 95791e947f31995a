// Package nightlab reads the workshop's nights and sample jobs for notebook
// cells: Night reads one night from the job catalog with Query, MustNight,
// MustCatalog and MustSampleJobs stop the cell with lab.Stop's one line when
// that fails.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package nightlab

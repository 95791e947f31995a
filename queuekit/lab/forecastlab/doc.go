// Package forecastlab holds notebook 09's demonstrations: forecasters ranked
// on the seed nights, the held-out night and the levers that bring its late
// share under the target.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package forecastlab

// Package schemalab is notebook 01's demonstration: an index design for the
// job catalog (keys, projection, GSI or LSI) checked against the notebook's
// queries, measured on DynamoDB Local and priced as AWS would charge it.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package schemalab

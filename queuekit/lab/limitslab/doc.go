// Package limitslab holds notebook 08's and 10's demonstrations on the limits
// layer (DynamoDB Local with AWS's partition limits in front): hot keys and
// write sharding, a warm table and a warm fleet replay.
//
// It is a sub-package of lab so that a cell links it (and what it imports)
// only when it calls it; lab itself links no AWS SDK.
package limitslab

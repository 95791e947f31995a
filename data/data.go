// Package data embeds the workshop's sample data so the tools work offline
// and from any working directory.
//
// sample_nights.jsonl holds the four sample nights of SPEC.md, one DynamoDB
// item per line, with the attribute names and formats of the job catalog
// table db_batch_window_requests.
package data

import _ "embed"

// SampleNightsFile is the name of the embedded sample file, used in error
// messages and as the default source name.
const SampleNightsFile = "data/sample_nights.jsonl"

// SampleNights is the content of data/sample_nights.jsonl.
//
//go:embed sample_nights.jsonl
var SampleNights []byte

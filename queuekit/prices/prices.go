// Package prices is the workshop's one dated price table: every dollar figure
// in queuekit (the cost of a seed's writes, of a Query or a Scan, a fleet's
// DynamoDB and SQS bill per day) is computed from Table2026, and a test
// fails if another price literal appears anywhere else in the module.
//
// The package imports nothing but the standard library, so any package, the
// charts included, can price what it shows.
package prices

// Table is one dated price table.
type Table struct {
	Region  string   // AWS region the prices are for
	Checked string   // date the figures were checked, YYYY-MM-DD
	Sources []string // pages the figures come from

	OnDemandPerMillionWrites float64 // $ per million write request units
	OnDemandPerMillionReads  float64 // $ per million read request units
	ProvisionedWCUHour       float64 // $ per write capacity unit-hour
	ProvisionedRCUHour       float64 // $ per read capacity unit-hour
	SQSStandardPerMillion    float64 // $ per million SQS standard-queue requests (first 100 billion a month)
	SQSFreeRequestsPerMonth  float64 // SQS requests free each month (not subtracted by the per-day figures)
}

// Table2026 are the us-east-1 list prices: DynamoDB on-demand since the
// price cut of 2024-11-01 (standard table class), DynamoDB provisioned
// capacity, and SQS standard queues (first 100 billion requests a month).
// The stored copies of the AWS pages searched for this table carry the unit
// definitions (a write unit is 1 KB, an eventually consistent read unit 4 KB
// at half a unit) but not the rates; the rates were read from summaries of
// those pages dated 2025-2026, which agree with each other and with the
// workshop's ENVIRONMENT.md. Check them on the pages before quoting a bill.
var Table2026 = Table{
	Region:  "us-east-1",
	Checked: "2026-11-22",
	Sources: []string{
		"https://aws.amazon.com/dynamodb/pricing/on-demand/",
		"https://aws.amazon.com/dynamodb/pricing/provisioned/",
		"https://aws.amazon.com/sqs/pricing/",
	},
	OnDemandPerMillionWrites: 0.625,
	OnDemandPerMillionReads:  0.125,
	ProvisionedWCUHour:       0.00065,
	ProvisionedRCUHour:       0.00013,
	SQSStandardPerMillion:    0.40,
	SQSFreeRequestsPerMonth:  1_000_000,
}

// WriteCost is the on-demand price in dollars of units write request units.
func (p Table) WriteCost(units float64) float64 { return units * p.OnDemandPerMillionWrites / 1e6 }

// ReadCost is the on-demand price in dollars of units read request units.
func (p Table) ReadCost(units float64) float64 { return units * p.OnDemandPerMillionReads / 1e6 }

// BreakEvenUtilization is the average utilisation of provisioned write
// capacity above which it costs less than on demand: the provisioned price of
// a unit-hour over the on-demand price of 3,600 writes.
func (p Table) BreakEvenUtilization() float64 {
	return p.ProvisionedWCUHour / (3600 * p.OnDemandPerMillionWrites / 1e6)
}

// ReadBreakEvenUtilization is the same break-even for reads: the
// provisioned price of a read unit-hour over the on-demand price of 3,600
// read units.
func (p Table) ReadBreakEvenUtilization() float64 {
	return p.ProvisionedRCUHour / (3600 * p.OnDemandPerMillionReads / 1e6)
}

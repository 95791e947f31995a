package capacity

// Prices is one dated price table: every dollar figure of the package comes
// from here.
type Prices struct {
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

// Prices2026 are the us-east-1 list prices: DynamoDB on-demand since the
// price cut of 2024-11-01 (standard table class), DynamoDB provisioned
// capacity, and SQS standard queues (first 100 billion requests a month).
// The stored copies of the AWS pages searched for this table carry the unit
// definitions (a write unit is 1 KB, an eventually consistent read unit 4 KB
// at half a unit) but not the rates; the rates were read from summaries of
// those pages dated 2025-2026, which agree with each other and with the
// workshop's ENVIRONMENT.md. Check them on the pages before quoting a bill.
var Prices2026 = Prices{
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

// BreakEvenUtilization is the average utilisation of provisioned write
// capacity above which it costs less than on demand: the provisioned price of
// a unit-hour over the on-demand price of 3,600 writes.
func (p Prices) BreakEvenUtilization() float64 {
	return p.ProvisionedWCUHour / (3600 * p.OnDemandPerMillionWrites / 1e6)
}

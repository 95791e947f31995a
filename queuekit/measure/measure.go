// Package measure holds what a measured DynamoDB read or write reports
// (AccessReport with its Pages, SeedReport), what a Query versus Scan study
// point and a measured read are (Point, Read), and their on-demand cost from
// the module's one price table. catalog and access fill them in; chart and
// the notebooks show them. It imports no AWS code, so presentation does not
// depend on the SDK.
package measure

import (
	"encoding/json"
	"math"
	"slices"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/prices"
)

// ReadCost is the on-demand price in dollars of rcu read request units
// (prices.Table2026).
func ReadCost(rcu float64) float64 { return prices.Table2026.ReadCost(rcu) }

// AccessReport measures one read of a night: what DynamoDB returned, what it
// had to read to get there, and what that cost.
type AccessReport struct {
	Method       string        // "Query" or "Scan"
	Count        int           // items returned
	ScannedCount int           // items read before the filter (Query: equal to Count)
	ConsumedRCU  float64       // read capacity units consumed, all pages
	Pages        int           // requests (pages of at most 1 MB)
	Segments     int           // parallel Scan segments (1 for Query and a plain Scan)
	Elapsed      time.Duration // wall time of the read (of repeated reads: the median of Samples)
	// Samples are the wall times of repeated timed reads, in the order they
	// were made (nil for a read made once). Read units and pages are the
	// same on every repeat; the wall time is not, so it is kept whole.
	Samples []time.Duration
	// PerPage describes every response in the order they arrived (for a
	// parallel Scan, the segments' pages interleaved).
	PerPage []Page
}

// Page is one response of a read: DynamoDB reads at most 1 MB per request
// before it applies a filter, so a page may return nothing (Count 0) and
// still say there is more (More: it carried a LastEvaluatedKey).
type Page struct {
	Count, ScannedCount int
	ConsumedRCU         float64
	More                bool
}

// EmptyPagesWithMore counts the pages that returned no item but had a next
// page: the 1 MB read limit applies before the filter.
func (r AccessReport) EmptyPagesWithMore() int {
	n := 0
	for _, p := range r.PerPage {
		if p.Count == 0 && p.More {
			n++
		}
	}
	return n
}

// Spread summarizes repeated timings of one read: how many (N), the
// fastest, the median and the 90th percentile. Both percentiles are nearest
// rank, the sample at position ⌈q n⌉ of the n sorted ones: with 10 samples
// the median is the 5th fastest and the p90 the 9th, with fewer than 10 the
// p90 is the slowest.
type Spread struct {
	N                int
	Min, Median, P90 time.Duration
}

// SpreadOf summarizes samples (the zero Spread for none).
func SpreadOf(samples []time.Duration) Spread {
	if len(samples) == 0 {
		return Spread{}
	}
	rank := func(q float64) time.Duration {
		v, _ := queuekit.Quantile(samples, q) // some samples: always ok
		return v
	}
	return Spread{N: len(samples), Min: slices.Min(samples), Median: rank(0.5), P90: rank(0.9)}
}

// Spread summarizes the report's Samples; a read made once is a spread of
// one sample, its Elapsed.
func (r AccessReport) Spread() Spread {
	if len(r.Samples) == 0 {
		return SpreadOf([]time.Duration{r.Elapsed})
	}
	return SpreadOf(r.Samples)
}

// accessJSON is the JSON form: {"count","scanned_count","consumed_rcu","pages","elapsed_ms","samples_ms"}.
type accessJSON struct {
	Count        int       `json:"count"`
	ScannedCount int       `json:"scanned_count"`
	ConsumedRCU  float64   `json:"consumed_rcu"`
	Pages        int       `json:"pages"`
	ElapsedMS    float64   `json:"elapsed_ms"`
	SamplesMS    []float64 `json:"samples_ms,omitempty"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

// MarshalJSON writes the report as {"count", "scanned_count",
// "consumed_rcu", "pages", "elapsed_ms", "samples_ms"} (samples_ms only for
// repeated reads).
func (r AccessReport) MarshalJSON() ([]byte, error) {
	a := accessJSON{r.Count, r.ScannedCount, r.ConsumedRCU, r.Pages, ms(r.Elapsed), nil}
	for _, d := range r.Samples {
		a.SamplesMS = append(a.SamplesMS, ms(d))
	}
	return json.Marshal(a)
}

// UnmarshalJSON reads the form MarshalJSON writes.
func (r *AccessReport) UnmarshalJSON(b []byte) error {
	var a accessJSON
	if err := json.Unmarshal(b, &a); err != nil {
		return err
	}
	*r = AccessReport{Count: a.Count, ScannedCount: a.ScannedCount, ConsumedRCU: a.ConsumedRCU, Pages: a.Pages,
		Elapsed: time.Duration(a.ElapsedMS * float64(time.Millisecond))}
	for _, m := range a.SamplesMS {
		r.Samples = append(r.Samples, time.Duration(m*float64(time.Millisecond)))
	}
	return nil
}

// SeedReport describes a finished seed.
type SeedReport struct {
	Items    int           // items written
	Requests int           // write requests sent, retries included
	Retried  int           // items sent again because DynamoDB returned them unprocessed
	Elapsed  time.Duration // wall time of the writes
	// WriteUnits are the write capacity units DynamoDB reported consumed,
	// table and indexes together (on demand: write request units); a write
	// of an item up to 1 KB is one unit, whether it goes in a
	// BatchWriteItem or a PutItem of its own.
	WriteUnits float64
	// IndexWriteUnits is the part of WriteUnits spent on global secondary
	// indexes: every index holding the item is written too.
	IndexWriteUnits float64
}

// Cost is the on-demand price of the seed's writes in dollars
// (prices.Table2026).
func (r SeedReport) Cost() float64 { return prices.Table2026.WriteCost(r.WriteUnits) }

// ItemsPerSecond is the write rate of the seed.
func (r SeedReport) ItemsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Items) / r.Elapsed.Seconds()
}

// Point is one measurement: the first night of a table of Nights nights,
// read by Query and by Scan.
type Point struct {
	Nights, Items int
	Table         string
	Date          string // the night read
	Query, Scan   AccessReport
}

// QueryCost is the dollars one Query of the night costs.
func (p Point) QueryCost() float64 { return ReadCost(p.Query.ConsumedRCU) }

// ScanCost is the dollars one Scan of the night costs.
func (p Point) ScanCost() float64 { return ReadCost(p.Scan.ConsumedRCU) }

// Read is one measured way of reading (part of) a night: what DynamoDB
// reported, how many requests it took and how many bytes came back over
// HTTP (the response bodies, as the client received them).
type Read struct {
	Label         string
	Report        AccessReport
	Requests      int
	ResponseBytes int64
}

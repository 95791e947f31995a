package limits

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strings"
	"time"
)

// Sample is one second of one table, index or partition, as CloudWatch
// would count it: consumed units, requests and throttled requests by
// reason. Units are what DynamoDB computes (not divided by S); limits are
// divided by S, so a throttled figure depends on S (see Scale).
type Sample struct {
	Second     time.Time      `json:"second"`
	Table      string         `json:"table"`
	Index      string         `json:"index,omitempty"` // "" for the table itself
	Partition  int            `json:"partition"`       // -1 for the whole table or index
	ReadUnits  float64        `json:"read_units"`
	WriteUnits float64        `json:"write_units"`
	Requests   int            `json:"requests"`
	Throttled  map[string]int `json:"throttled,omitempty"` // by ThrottlingReason, plus "TransactionConflict"
}

type statKey struct {
	sec          int64
	table, index string
	part         int
}

// stats keeps the samples (the layer's mutex guards it).
type stats struct {
	m map[statKey]*Sample
}

func (s *stats) at(now time.Time, table, index string, part int) *Sample {
	if s.m == nil {
		s.m = map[statKey]*Sample{}
	}
	k := statKey{now.Unix(), table, index, part}
	c := s.m[k]
	if c == nil {
		c = &Sample{Second: time.Unix(k.sec, 0).UTC(), Table: table, Index: index, Partition: part}
		s.m[k] = c
	}
	return c
}

func (s *stats) throttle(now time.Time, table, index string, part int, reason string) {
	c := s.at(now, table, index, part)
	if c.Throttled == nil {
		c.Throttled = map[string]int{}
	}
	c.Throttled[reason]++
}

// snapshot copies the samples, sorted by second, table, index, partition.
func (s *stats) snapshot() []Sample {
	out := make([]Sample, 0, len(s.m))
	for _, c := range s.m {
		c2 := *c
		c2.Throttled = maps.Clone(c.Throttled)
		out = append(out, c2)
	}
	slices.SortFunc(out, func(a, b Sample) int {
		if c := a.Second.Compare(b.Second); c != 0 {
			return c
		}
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		if c := strings.Compare(a.Index, b.Index); c != 0 {
			return c
		}
		return a.Partition - b.Partition
	})
	return out
}

// Totals sums samples of one table and index (partition -1 rows only):
// units, requests and throttles by reason.
func Totals(samples []Sample, table, index string) Sample {
	t := Sample{Table: table, Index: index, Partition: -1, Throttled: map[string]int{}}
	for _, s := range samples {
		if s.Table != table || s.Index != index || s.Partition != -1 {
			continue
		}
		t.ReadUnits += s.ReadUnits
		t.WriteUnits += s.WriteUnits
		t.Requests += s.Requests
		for r, n := range s.Throttled {
			t.Throttled[r] += n
		}
	}
	return t
}

// ThrottledTotal is the number of throttled requests of a sample, all
// reasons.
func (s Sample) ThrottledTotal() int {
	n := 0
	for _, v := range s.Throttled {
		n += v
	}
	return n
}

// writeJSON writes the samples to path (through a temporary file, so a
// reader never sees half a file).
func writeJSON(path string, scale float64, samples []Sample) error {
	b, err := json.MarshalIndent(struct {
		Scale   float64  `json:"scale"`
		Samples []Sample `json:"samples"`
	}{scale, samples}, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

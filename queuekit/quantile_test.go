package queuekit

import "testing"

// ⌈0.95·12⌉ − 1 = 11: the largest of 12; ⌈0.95·20⌉ − 1 = 18: the second
// largest of 20; ⌈0.5·4⌉ − 1 = 1. No values, or q outside (0, 1], is not ok.
func TestQuantileIsNearestRank(t *testing.T) {
	twelve := []float64{12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	twenty := make([]float64, 20)
	for i := range twenty {
		twenty[i] = float64(i + 1)
	}
	for _, tt := range []struct {
		vals   []float64
		q      float64
		want   float64
		wantOK bool
	}{{twelve, 0.95, 12, true}, {twenty, 0.95, 19, true}, {[]float64{4, 3, 2, 1}, 0.5, 2, true}, {nil, 0.95, 0, false}, {twelve, 0, 0, false}, {twelve, 1.5, 0, false}} {
		if got, ok := Quantile(tt.vals, tt.q); got != tt.want || ok != tt.wantOK {
			t.Errorf("Quantile(%v, %v) = %v, %v, want %v, %v", tt.vals, tt.q, got, ok, tt.want, tt.wantOK)
		}
	}
	if twelve[0] != 12 {
		t.Error("Quantile sorted its input")
	}
}

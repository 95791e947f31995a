package montecarlo

import (
	"fmt"
	"math"
	"testing"
)

// Exact McNemar p-values by hand from the binomial with p = ½ (the
// textbook's exact form of the test, e.g. Agresti, Categorical Data
// Analysis, 10.1): 0 against 10 discordant pairs is 2 × ½¹⁰ = 2/1024;
// 2 against 8 is 2 × (1 + 10 + 45)/1024 = 112/1024; 5 against 5 is capped
// at 1; 0 against 292 is 2 × 2⁻²⁹²; no discordant pair is 1.
func TestMcNemarMatchesTheBinomialByHand(t *testing.T) {
	for _, tt := range []struct {
		b, c int
		want float64
	}{
		{0, 10, 2.0 / 1024},
		{10, 0, 2.0 / 1024},
		{2, 8, 112.0 / 1024},
		{5, 5, 1},
		{0, 292, 2 * math.Pow(2, -292)},
		{0, 0, 1},
	} {
		got, err := McNemar(tt.b, tt.c)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tt.want) > 1e-12*tt.want {
			t.Errorf("McNemar(%d, %d) = %v, want %v", tt.b, tt.c, got, tt.want)
		}
	}
	if _, err := McNemar(-1, 3); err == nil {
		t.Error("a negative count: no error")
	}
}

// A comparison's McNemar reads its discordant overflow counts.
func ExampleComparison_McNemar() {
	p, err := Comparison{OnlyAOverflows: 8, OnlyBOverflows: 2}.McNemar()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("p = %.4f\n", p)
	// Output: p = 0.1094
}

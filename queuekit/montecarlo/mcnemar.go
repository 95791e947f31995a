package montecarlo

import (
	"fmt"

	"gonum.org/v1/gonum/stat/distuv"
)

// McNemar is the exact (binomial) McNemar test of paired yes/no outcomes:
// of the pairs on which the two configurations disagree, b went one way
// (only A overflowed) and c the other (only B). If both overflowed equally
// often, each discordant pair is a fair coin, so the count b is
// Binomial(b + c, ½); the two-sided p-value is twice the probability of a
// split at least as lopsided as the one seen, at most 1:
//
//	p = min(1, 2 × P(X ≤ min(b, c))),  X ~ Binomial(b + c, ½)
//
// The pairs on which both or neither overflowed say nothing about which
// overflows more and do not enter. With no discordant pair the test has
// nothing to judge and p is 1.
func McNemar(b, c int) (float64, error) {
	if b < 0 || c < 0 {
		return 0, fmt.Errorf("mcnemar: discordant counts %d and %d: want both >= 0", b, c)
	}
	n := b + c
	if n == 0 {
		return 1, nil
	}
	x := distuv.Binomial{N: float64(n), P: 0.5}
	return min(1, 2*x.CDF(float64(min(b, c)))), nil
}

// McNemar is the exact McNemar test of the comparison's overflows
// (OnlyAOverflows against OnlyBOverflows): the p-value of a split of the
// discordant replications at least this lopsided if both configurations
// overflowed equally often.
func (c Comparison) McNemar() (float64, error) {
	return McNemar(c.OnlyAOverflows, c.OnlyBOverflows)
}

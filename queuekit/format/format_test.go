package format_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/format"
)

func TestTableMarkdownEscapesPipesDollarsAndNewlines(t *testing.T) {
	tb := format.Table{Headers: []string{"name", "value"}, Rows: [][]string{{"a|b", "$1.50"}, {"two\nlines"}}}
	want := "| name | value |\n|---|---|\n| a\\|b | \\\\$1.50 |\n| two lines |  |\n"
	if got := tb.Markdown(); got != want {
		t.Errorf("markdown:\n%q\nwant:\n%q", got, want)
	}
	if got := (format.Table{}).Markdown(); got != "" {
		t.Errorf("no headers: %q, want nothing", got)
	}
}

func TestTableStringAlignsNumbersRight(t *testing.T) {
	tb := format.Table{Headers: []string{"name", "value"}, Rows: [][]string{{"a|b", "1.5"}, {"long name", "12"}, {"cost", "$0.25"}}}
	want := "name       value\n---------  -----\na|b          1.5\nlong name     12\ncost       $0.25\n"
	if got := tb.String(); got != want {
		t.Errorf("text:\n%q\nwant:\n%q", got, want)
	}
}

func TestNumbers(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{format.Num(25), "25"}, {format.Num(2.5), "2.5"}, {format.Num(1.0 / 3), "0.33"}, {format.Num(-0.001), "0"},
		{format.Num(math.NaN()), "–"}, {format.Num(math.Inf(1)), "–"},
		{format.Percent(0.0523), "5.2%"}, {format.Percent(1), "100.0%"}, {format.Percent(math.NaN()), "–"},
		{format.Millis(117.94), "117.9"},
		{format.Millis(1105.64), "1,105.6"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestDollars(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "$0.00"}, {1.5, "$1.50"}, {123.456, "$123.46"}, {0.125, "$0.125"}, {0.000456789, "$0.000457"}, {-2, "-$2.00"}, {math.NaN(), "–"}} {
		if got := format.Dollars(c.v); got != c.want {
			t.Errorf("Dollars(%g) = %s, want %s", c.v, got, c.want)
		}
	}
}

func ExampleTable() {
	t := format.Table{Headers: []string{"read", "RCU", "cost per million reads"},
		Rows: [][]string{{"Query", format.Num(0.5), format.Dollars(0.0625)}, {"Scan", format.Num(99.5), format.Dollars(12.4375)}}}
	fmt.Print(t.String())
	fmt.Print(t.Markdown())
	// Output:
	// read   RCU   cost per million reads
	// -----  ----  ----------------------
	// Query   0.5                 $0.0625
	// Scan   99.5                  $12.44
	// | read | RCU | cost per million reads |
	// |---|---|---|
	// | Query | 0.5 | \\$0.0625 |
	// | Scan | 99.5 | \\$12.44 |
}

// A fraction strictly between 0 and 1 keeps the decimals that show it is
// neither 0 nor 1: 0.9995 → 99.95% (one decimal would round to 100.0%),
// 0.0004 → 0.04%; exact 0 and 1 stay "0.0%" and "100.0%".
func TestPercentNeverRoundsToCertainty(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{0.0523, "5.2%"}, {0.9995, "99.95%"}, {0.99999, "99.999%"}, {0.0004, "0.04%"}, {0, "0.0%"}, {1, "100.0%"}, {0.5, "50.0%"}} {
		if got := format.Percent(c.f); got != c.want {
			t.Errorf("Percent(%v) = %s, want %s", c.f, got, c.want)
		}
	}
}

func TestSigGroupsAndNeverUsesExponents(t *testing.T) {
	for _, c := range []struct {
		v      float64
		digits int
		want   string
	}{
		{18.078125, 6, "18.0781"}, {11570, 6, "11,570"}, {1.5e10, 6, "15,000,000,000"}, {0.1067708, 6, "0.106771"},
		{1157.407407, 5, "1,157.4"}, {347222.2, 6, "347,222"}, {-12345.6, 4, "-12,346"}, {0, 6, "0"},
		{1e9, 3, "1,000,000,000"}, {2.5, 6, "2.5"}, {math.NaN(), 6, "–"}, {math.Inf(-1), 6, "–"},
	} {
		if got := format.Sig(c.v, c.digits); got != c.want {
			t.Errorf("Sig(%v, %d) = %q, want %q", c.v, c.digits, got, c.want)
		}
	}
	for _, c := range []struct{ got, want string }{
		{format.Int(347222), "347,222"}, {format.Int(999), "999"}, {format.Int(-1000), "-1,000"}, {format.Int(int64(100000000)), "100,000,000"},
		{format.Group("1157.4"), "1,157.4"}, {format.Group("123456"), "123,456"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// Every number a participant reads has thousands separators, four-digit
// ones included (issue 26: "1585", "1157.41" without them were a finding).
func TestNumAndFigureGroupThousands(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{1e8, "100,000,000"}, {1e9, "1,000,000,000"}, {17362.5, "17,362.5"}, {9999, "9,999"}, {4629.63, "4,629.63"}, {1157.407, "1,157.41"},
		{-25000, "-25,000"}, {999, "999"}, {1.0 / 3, "0.33"}, {math.NaN(), "–"}} {
		if got := format.Figure(c.v); got != c.want {
			t.Errorf("Figure(%v) = %q, want %q", c.v, got, c.want)
		}
		if got := format.Num(c.v); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func ExamplePercentAt() {
	for _, f := range []float64{0, 0.00004, 0.0312, 0.9995, 0.99996, 1} {
		fmt.Println(format.PercentAt(f, 2))
	}
	// Output:
	// 0.00%
	// under 0.01%
	// 3.12%
	// 99.95%
	// over 99.99%
	// 100.00%
}

func ExamplePValue() {
	fmt.Println(format.PValue(0.109375))
	fmt.Println(format.PValue(1.6e-88))
	// Output:
	// 0.11
	// below 0.0001
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{1500 * time.Millisecond: "1.5 s", 0: "0.0 s", 61 * time.Second: "61.0 s", 2449 * time.Millisecond: "2.4 s"} {
		if got := format.Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

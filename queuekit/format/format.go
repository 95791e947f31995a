// Package format turns numbers into the short text the workshop shows:
// tables (Markdown for notebooks, aligned plain text for terminals),
// numbers, percentages and money. It is a leaf: it imports nothing from
// queuekit, so every presentation package (chart, report, lab, the CLI) can
// use it and no domain package needs to.
//
// Markdown output is safe to display in JupyterLab: every character that
// Markdown would act on inside a table cell is escaped with a backslash, so
// the rendered cell shows exactly the text it was given ("24*60*60" stays
// "24*60*60", not "24" + an italic "60"; "<none>" is not swallowed as
// HTML; "[3 17]" is not a link label); a "|" is escaped so it stays in its
// column, a newline becomes a space, and "$" is written `\\$` because JupyterLab typesets text between two dollar signs as
// mathematics. One backslash is not enough: the Markdown renderer turns
// `\$` into a bare "$" before MathJax scans the page, so two escaped dollars
// in one cell or paragraph still become a formula. With two, the page holds
// `\$`, which MathJax shows as a literal dollar (checked in JupyterLab by
// tests/browser: no table or paragraph of the notebooks holds typeset math).
package format

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Table is a small table of values already formatted as text.
type Table struct {
	Headers []string
	Rows    [][]string
}

// Markdown renders the table as a GitHub-flavoured Markdown table. Short rows
// are padded with empty cells; cells are escaped with EscapeMarkdown.
func (t Table) Markdown() string {
	if len(t.Headers) == 0 {
		return ""
	}
	var b strings.Builder
	row := func(cells []string) {
		b.WriteString("|")
		for i := range t.Headers {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			b.WriteString(" ")
			b.WriteString(EscapeMarkdown(cell))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	row(t.Headers)
	b.WriteString("|")
	for range t.Headers {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.String()
}

// String renders the table as aligned plain text, numbers right-aligned.
func (t Table) String() string {
	if len(t.Headers) == 0 {
		return ""
	}
	width := make([]int, len(t.Headers))
	for i, h := range t.Headers {
		width[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.Rows {
		for i := range t.Headers {
			if i < len(r) {
				width[i] = max(width[i], utf8.RuneCountInString(r[i]))
			}
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		var l strings.Builder
		for i := range t.Headers {
			cell := ""
			if i < len(cells) {
				cell = cells[i]
			}
			if i > 0 {
				l.WriteString("  ")
			}
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(cell))
			if isNumber(cell) {
				l.WriteString(pad + cell)
			} else {
				l.WriteString(cell + pad)
			}
		}
		b.WriteString(strings.TrimRight(l.String(), " "))
		b.WriteString("\n")
	}
	line(t.Headers)
	rule := make([]string, len(t.Headers))
	for i, w := range width {
		rule[i] = strings.Repeat("-", w)
	}
	line(rule)
	for _, r := range t.Rows {
		line(r)
	}
	return b.String()
}

// isNumber reports whether a cell reads as a number ("12", "5.2%", "$0.01",
// "3×"), which String right-aligns.
func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "$")
	s = strings.TrimSuffix(strings.TrimSuffix(s, "%"), "×")
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// markdownActive are the characters that Markdown (CommonMark with GitHub's
// tables, as JupyterLab renders it) acts on inside a line: the backslash
// itself, code spans, emphasis and strike-through, links and images, raw
// HTML and autolinks, entity references, and the table's column separator
// ("!" acts only before "[", which is escaped). It is for text inside a line:
// block marks at a line's start ("# ", "- ") are not escaped.
// Each is written with a backslash, which CommonMark defines for every ASCII
// punctuation character, so the escaped text renders as the character.
const markdownActive = "\\`*_~[]<>&|"

var markdownEscaper = func() *strings.Replacer {
	pairs := []string{"$", `\\$`, "\r\n", " ", "\n", " ", "\r", " "}
	for _, c := range markdownActive {
		pairs = append(pairs, string(c), `\`+string(c))
	}
	return strings.NewReplacer(pairs...)
}()

// EscapeMarkdown makes text safe inside a Markdown table cell or a line
// displayed by JupyterLab, so it renders as exactly the characters given:
// each of \ ` * _ ~ [ ] < > & | gets a backslash, "$" is written `\\$`
// (two backslashes: see the package doc), and newlines become spaces.
func EscapeMarkdown(s string) string { return markdownEscaper.Replace(s) }

// Num formats a number compactly: integers without decimals, others with at
// most two, trailing zeros dropped, the integer part grouped in thousands
// ("1,585", "1,157.41"). NaN and infinities print as "–".
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return Group(strconv.FormatFloat(v, 'f', 0, 64))
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return Group(s)
}

// Percent formats a fraction as a percentage with one decimal: 0.0523 -> "5.2%".
// A fraction strictly between 0 and 1 never prints as "0.0%" or "100.0%":
// it gets up to three decimals, so 0.9995 is "99.95%", not a certainty.
// NaN and infinities print as "–".
func Percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	s := strconv.FormatFloat(100*f, 'f', 1, 64)
	for d := 2; d <= 3 && f > 0 && f < 1; d++ {
		if v, _ := strconv.ParseFloat(s, 64); v != 0 && v != 100 {
			break
		}
		s = strconv.FormatFloat(100*f, 'f', d, 64)
	}
	return s + "%"
}

// Dollars formats an amount of money: cents for amounts of a dollar or more
// ("$12.50"), three significant digits below ("$0.0000625"). NaN and
// infinities print as "–".
func Dollars(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v < 0 {
		return "-" + Dollars(-v)
	}
	if v >= 1 || v == 0 {
		return "$" + strconv.FormatFloat(v, 'f', 2, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(v)))
	return "$" + strconv.FormatFloat(v, 'f', digits, 64)
}

// Millis formats a duration given in milliseconds with one decimal and the
// integer part grouped in thousands, as Num does: "3.2", "1,105.6".
func Millis(ms float64) string {
	if math.IsNaN(ms) || math.IsInf(ms, 0) {
		return "–"
	}
	return Group(strconv.FormatFloat(ms, 'f', 1, 64))
}

// Sig formats a number with at most digits significant digits, never in
// exponent form, and groups the integer part in thousands: 18.078125 →
// "18.0781", 11570 → "11,570", 1.5e10 → "15,000,000,000", 0.106771 →
// "0.106771" (digits 6). Trailing zeros after the point are dropped. NaN and
// infinities print as "–".
func Sig(v float64, digits int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v == 0 {
		return "0"
	}
	digits = max(digits, 1)
	mag := int(math.Floor(math.Log10(math.Abs(v)))) + 1 // digits before the point
	decimals := max(digits-mag, 0)
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if decimals > 0 {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return Group(s)
}

// Int formats a whole number with thousands separators: 347222 → "347,222".
func Int[T ~int | ~int64 | ~int32 | ~uint64](n T) string {
	return Group(strconv.FormatInt(int64(n), 10))
}

// Group puts thousands separators into the integer part of a decimal number
// written without exponent: "1157.4" → "1,157.4", "-12345" → "-12,345".
func Group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		return sign + b.String() + "." + frac
	}
	return sign + b.String()
}

// Figure is Num: kept for the tables that called it when Num did not group
// thousands (every number a participant reads now has separators).
func Figure(v float64) string { return Num(v) }

// PercentAt formats a fraction as a percentage with a fixed number of
// decimals, one rounding rule for every cell of a table. A fraction strictly
// between 0 and 1 that would print as 0 or 100 at that precision says so in
// words instead: PercentAt(0.99995, 2) is "over 99.99%", not a certainty;
// PercentAt(1, 2) is "100.00%". NaN and infinities print as "–".
func PercentAt(f float64, decimals int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	s := strconv.FormatFloat(100*f, 'f', decimals, 64)
	step := strconv.FormatFloat(math.Pow(10, -float64(decimals)), 'f', decimals, 64)
	if v, _ := strconv.ParseFloat(s, 64); f > 0 && f < 1 {
		if v == 0 {
			return "under " + step + "%"
		}
		if v == 100 {
			return "over " + strconv.FormatFloat(100-math.Pow(10, -float64(decimals)), 'f', decimals, 64) + "%"
		}
	}
	return s + "%"
}

// PValue formats a test's p-value: two significant digits down to 0.0001,
// "below 0.0001" under it (a smaller p says nothing more a reader can use).
func PValue(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "–"
	}
	if p < 1e-4 {
		return "below 0.0001"
	}
	return Sig(p, 2)
}

// Seconds writes a duration in seconds with one decimal: "1.5 s".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + " s"
}

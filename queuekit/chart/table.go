package chart

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Table is a small table of numbers already formatted as text.
type Table struct {
	Headers []string
	Rows    [][]string
}

// Markdown renders the table as a GitHub-flavoured Markdown table.
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
			b.WriteString(escapeMarkdown(cell))
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

func isNumber(s string) bool {
	s = strings.TrimSuffix(s, "%")
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

func escapeMarkdown(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

// Num formats a number compactly: integers without decimals, others with at
// most two, trailing zeros dropped. NaN and infinities print as "–".
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		s = "0"
	}
	return s
}

// Percent formats a fraction as a percentage with one decimal: 0.0523 -> "5.2%".
func Percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "–"
	}
	return strconv.FormatFloat(100*f, 'f', 1, 64) + "%"
}

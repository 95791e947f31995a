package lab

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/nightqueue/workshop/queuekit/format"
)

// The self-check lines start with these marks.
const (
	PassMark   = "✓ pass: "
	NotYetMark = "✗ not yet: "
)

// Report prints one self-check line and returns ok.
func Report(ok bool, name, detail, hint string) bool {
	var b strings.Builder
	if ok {
		b.WriteString(PassMark + name)
		if detail != "" {
			b.WriteString(" (" + detail + ")")
		}
	} else {
		b.WriteString(NotYetMark + name)
		if detail != "" {
			b.WriteString(": " + detail)
		}
		if hint != "" {
			b.WriteString(". Hint: " + hint)
		}
	}
	fmt.Fprintln(os.Stdout, b.String())
	reportToBoard(ok, name)
	return ok
}

// CheckNear checks that got is within tol (absolute) of want, prints
// "✓ pass: name (got …)" or "✗ not yet: name: got …, too high. Hint: hint",
// and returns whether it passed. A failed check never prints want: the
// exercise is to find it. NaN and infinities never pass.
func CheckNear(name string, got, want, tol float64, hint string) bool {
	tol = math.Abs(tol)
	ok := !math.IsNaN(got) && !math.IsInf(got, 0) && math.Abs(got-want) <= tol
	detail := "got " + fmtFloat(got)
	switch {
	case ok:
	case got > want:
		detail += ", too high"
	case got < want:
		detail += ", too low"
	}
	return Report(ok, name, detail, hint)
}

// Check is CheckNear under a shorter name.
func Check(name string, got, want, tol float64, hint string) bool {
	return CheckNear(name, got, want, tol, hint)
}

// CheckEqual checks that got equals want; like CheckNear it never prints want.
func CheckEqual[T comparable](name string, got, want T, hint string) bool {
	detail := fmt.Sprintf("got %v", got)
	// "" and NoPrediction (-1) are the placeholders the exercises start with.
	if s := fmt.Sprint(got); s == "" || s == fmt.Sprint(NoPrediction) {
		detail = "no answer written yet"
	}
	return Report(got == want, name, detail, hint)
}

// CheckTrue checks a condition the exercise states in name.
func CheckTrue(name string, ok bool, hint string) bool {
	return Report(ok, name, "", hint)
}

// CheckBetween checks that lo <= got <= hi; a failure says which side.
func CheckBetween(name string, got, lo, hi float64, hint string) bool {
	ok := got >= lo && got <= hi
	detail := "got " + fmtFloat(got)
	switch {
	case got > hi:
		detail += ", too high"
	case got < lo:
		detail += ", too low"
	case !ok:
		detail += ", not a number"
	}
	return Report(ok, name, detail, hint)
}

// CheckNoError checks that err is nil, showing the error when it is not.
func CheckNoError(name string, err error, hint string) bool {
	if err != nil {
		return Report(false, name, "error: "+err.Error(), hint)
	}
	return Report(true, name, "", hint)
}

// fmtFloat prints up to 4 significant digits, never in exponent form, the
// integer part grouped in thousands (format.Sig): enough to compare by eye.
func fmtFloat(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprint(v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return format.Num(v)
	}
	return format.Sig(v, 4)
}

// NoPrediction is the placeholder a predict-then-run exercise starts with:
// any negative guess means "not written yet".
const NoPrediction = -1

// Predicted is the last line of a predict-then-run cell: the participant
// wrote guess before running, the cell measured the real value, and this
// line compares them ("your prediction of name: you predicted 3, measured 5: 40% low").
// A negative guess (NoPrediction) means none was written: the line shows
// the measurement and asks for a prediction first next time. Unlike the
// Check functions it prints the measured value: the run is the reveal.
func Predicted(name string, guess, measured float64, unit string) {
	predicted(name, guess, measured, unit, "measured")
}

// PredictedRule is Predicted for a value a cell derives from a rule (the
// code's own parameters), not one it measured: the line says "by the rule".
func PredictedRule(name string, guess, value float64, unit string) {
	predicted(name, guess, value, unit, "by the rule")
}

func predicted(name string, guess, measured float64, unit, word string) {
	if unit != "" {
		unit = " " + unit
	}
	m := fmtFloat(measured) + unit
	if guess < 0 || math.IsNaN(guess) {
		fmt.Fprintf(os.Stdout, "your prediction of %s: %s %s; you wrote no prediction: write one before you run the next exercise\n", name, word, m)
		return
	}
	verdict := "exactly right"
	if d := guess - measured; d != 0 {
		switch {
		case measured == 0:
			verdict = "the measurement is 0"
		case d > 0:
			verdict = format.Percent(d/math.Abs(measured)) + " high"
		default:
			verdict = format.Percent(-d/math.Abs(measured)) + " low"
		}
	}
	fmt.Fprintf(os.Stdout, "your prediction of %s: you predicted %s, %s %s: %s\n", name, fmtFloat(guess)+unit, word, m, verdict)
}

package queuekit_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// Fatal marks an error through any wrapping; an unmarked error is not
// fatal, and the mark keeps the error it wraps reachable.
func TestFatal(t *testing.T) {
	base := errors.New("disk full")
	err := fmt.Errorf("job 7: %w", queuekit.Fatal(base))
	if !queuekit.IsFatal(err) || !errors.Is(err, base) {
		t.Fatalf("IsFatal %v, errors.Is(base) %v on %q: want both true", queuekit.IsFatal(err), errors.Is(err, base), err)
	}
	if queuekit.IsFatal(base) || queuekit.IsFatal(nil) {
		t.Fatal("an unmarked error (or nil) reported fatal")
	}
	if got, want := err.Error(), "job 7: fatal: disk full"; got != want {
		t.Fatalf("text %q, want %q", got, want)
	}
}

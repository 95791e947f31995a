package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

// bar is a terminal progress bar on stderr, drawn only when stderr is a
// terminal so pipes and CI logs stay clean.
type bar struct {
	label string
	tty   bool
	mu    sync.Mutex
	last  time.Time
	shown bool
}

func newBar(label string) *bar {
	fi, err := os.Stderr.Stat()
	return &bar{label: label, tty: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

// update draws done/total, at most ten times a second and always at the end.
func (b *bar) update(done, total int) {
	if !b.tty || total <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if done < total && time.Since(b.last) < 100*time.Millisecond {
		return
	}
	b.last = time.Now()
	const width = 30
	n := width * done / total
	fmt.Fprintf(os.Stderr, "\r%s [%s%s] %d/%d", b.label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
	b.shown = true
}

// done ends the bar's line.
func (b *bar) done() {
	if b.shown {
		fmt.Fprintln(os.Stderr)
	}
}

package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit"
)

// progress reports long work on the command's stderr. On a terminal it
// draws a bar, redrawn at most ten times a second; anywhere else (a pipe, a
// log, a test's buffer) it writes step lines with the elapsed time: one when
// the work starts, then at most one every lineEvery, and one at the end.
type progress struct {
	w     io.Writer
	label string
	tty   bool
	began time.Time

	mu    sync.Mutex
	last  time.Time
	shown bool
	ended bool
}

// lineEvery spaces the step lines written when stderr is not a terminal.
const lineEvery = 5 * time.Second

func newProgress(w io.Writer, label string) *progress {
	p := &progress{w: w, label: label, began: time.Now()}
	if f, ok := w.(*os.File); ok {
		fi, err := f.Stat()
		p.tty = err == nil && fi.Mode()&os.ModeCharDevice != 0
	}
	return p
}

// update reports done of total.
func (p *progress) update(done, total int) {
	if total <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if p.tty {
		if done < total && now.Sub(p.last) < 100*time.Millisecond {
			return
		}
		const width = 30
		n := width * done / total
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
	} else {
		first := !p.shown
		if !first && done < total && now.Sub(p.last) < lineEvery {
			return
		}
		if done == total {
			if p.ended {
				return
			}
			p.ended = true
		}
		fmt.Fprintf(p.w, "%s: %d/%d (%.0f%%), %.1f s\n", p.label, done, total, 100*float64(done)/float64(total), now.Sub(p.began).Seconds())
	}
	p.last = now
	p.shown = true
}

// report is update in the shape every queuekit operation reports progress.
func (p *progress) report(r queuekit.Progress) { p.update(r.Done, r.Total) }

// done ends the bar's line on a terminal.
func (p *progress) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprintln(p.w)
	}
}

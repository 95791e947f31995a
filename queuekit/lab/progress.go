package lab

import (
	"fmt"
	"html"
	"io"
	"os"
	"sync"
	"time"

	"github.com/janpfeifer/gonb/gonbui"

	"github.com/nightqueue/workshop/queuekit"
)

// MinInterval is the shortest time between two progress updates in a
// notebook (at most ten a second).
const MinInterval = 100 * time.Millisecond

// Progress is a live progress bar for a long cell. In a notebook it is an
// HTML <progress> element updated in place with gonbui.UpdateHTML, at most
// ten times a second; outside a notebook it prints a plain line at every
// tenth of the way. It is safe for concurrent use.
//
//	p := lab.NewProgress("seeding a year", 365)
//	for d := range 365 { seed(d); p.Add(1) }
//	p.Done()
type Progress struct {
	mu       sync.Mutex
	label    string
	total    int
	done     int
	id       string
	notebook bool
	started  time.Time
	last     time.Time // last notebook update
	tenth    int       // last tenth printed on a terminal
	finished bool
	note     string // last Note from Report, shown after the count

	now    func() time.Time
	out    io.Writer
	update func(id, html string) // gonbui.UpdateHTML
	show   func(html string)     // gonbui.DisplayHTML
}

// NewProgress starts a progress bar for total steps (total <= 0: unknown,
// only the count is shown).
func NewProgress(label string, total int) *Progress {
	p := &Progress{label: label, total: total, notebook: notebook(),
		now: time.Now, out: os.Stdout, update: updateHTML, show: displayHTML}
	p.start()
	return p
}

func (p *Progress) start() {
	p.started = p.now()
	if p.notebook {
		p.id = "queuekit-progress-" + gonbui.UniqueId()
		p.last = p.started
		p.update(p.id, p.html())
	}
}

// Add records n more steps done.
func (p *Progress) Add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(p.done + n)
}

// Set records that done steps are done.
func (p *Progress) Set(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.setLocked(done)
}

// Report records a progress report from a queuekit operation: its Done,
// its Total when it knows one, and its Note. It has the shape every long
// operation in queuekit takes, so a cell passes bar.Report as the callback.
func (p *Progress) Report(r queuekit.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Total > 0 {
		p.total = r.Total
	}
	p.note = r.Note
	p.setLocked(r.Done)
}

func (p *Progress) setLocked(done int) {
	if p.finished {
		return
	}
	p.done = max(done, 0)
	if p.notebook {
		if now := p.now(); now.Sub(p.last) >= MinInterval {
			p.last = now
			p.update(p.id, p.html())
		}
		return
	}
	if p.total > 0 {
		if tenth := min(10*p.done/p.total, 10); tenth > p.tenth && tenth < 10 {
			p.tenth = tenth
			fmt.Fprintln(p.out, p.text())
		}
	}
}

// Done finishes the bar: in a notebook the live block is replaced by a
// final one that stays in the saved notebook; on a terminal a last line is
// printed. Calling Done again does nothing.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.finished {
		return
	}
	p.finished = true
	p.note = "" // a note describes work under way
	if p.total > 0 && p.done < p.total {
		p.done = p.total
	}
	if p.notebook {
		p.update(p.id, "")
		p.show(p.html())
		return
	}
	fmt.Fprintln(p.out, p.text()+" done")
}

func (p *Progress) count() string {
	if p.total > 0 {
		return fmt.Sprintf("%d/%d (%d%%)", p.done, p.total, 100*p.done/p.total)
	}
	return fmt.Sprintf("%d", p.done)
}

func (p *Progress) text() string {
	if p.note != "" {
		return p.label + ": " + p.count() + ", " + p.note
	}
	return p.label + ": " + p.count()
}

func (p *Progress) html() string {
	bar := "<progress style=\"width:320px;vertical-align:middle\"></progress>"
	if p.total > 0 {
		bar = fmt.Sprintf("<progress value=\"%d\" max=\"%d\" style=\"width:320px;vertical-align:middle\"></progress>", min(p.done, p.total), p.total)
	}
	elapsed := p.now().Sub(p.started).Round(100 * time.Millisecond)
	return fmt.Sprintf("<div class=\"queuekit-progress\">%s <span style=\"font-family:monospace\">%s · %s</span></div>",
		bar, html.EscapeString(p.text()), elapsed)
}

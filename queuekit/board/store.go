// Package board is the room board: a JupyterHub service that shows the
// instructor, live, which notebook every participant is in and which of its
// self-checks (lab.CheckTrue and friends) passed, failed or have not run
// yet, with a go-echarts chart of the room's progress over time.
//
// The self-checks report themselves (queuekit/lab posts a Report with the
// participant's own JupyterHub API token); the board asks the hub whose
// token it is and records the report under that name only. Every report is
// appended to a file (one JSON line each), so the board comes back with its
// history after a restart of the hub or of the board.
package board

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"
)

// Report is what a self-check sends: the notebook it runs in, its name and
// whether it passed. User is optional: when set it must be the owner of the
// token the report comes with, or the board refuses the report.
type Report struct {
	Notebook string `json:"notebook"`
	Check    string `json:"check"`
	OK       bool   `json:"ok"`
	User     string `json:"user,omitempty"`
}

// Limits of a report's fields (a longer value is refused, never cut).
const (
	MaxNameLen   = 300
	MaxReportLen = 4096 // bytes of a request body
)

// Event is one recorded report: who (as the hub said), when, what.
type Event struct {
	Time     time.Time `json:"time"`
	User     string    `json:"user"`
	Notebook string    `json:"notebook"`
	Check    string    `json:"check"`
	OK       bool      `json:"ok"`
}

// Status of a check on the board.
const (
	Pass   = "pass"
	Fail   = "fail"
	NotRun = "not run"
)

// Store keeps every event in memory and appends each to its file.
type Store struct {
	mu     sync.Mutex
	path   string
	file   *os.File
	events []Event
}

// Open reads the events already in path (a missing file is an empty board)
// and opens it for appending. A last line cut short by a crash is skipped
// and reported in skipped; any other bad line is an error naming its line.
func Open(path string) (s *Store, skipped int, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, 0, fmt.Errorf("board store: %w", err)
	}
	s = &Store{path: path}
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, 0, fmt.Errorf("board store: %w", err)
	default:
		s.events, skipped, err = readEvents(f, path)
		f.Close()
		if err != nil {
			return nil, 0, err
		}
	}
	s.file, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("board store: %w", err)
	}
	return s, skipped, nil
}

func readEvents(r io.Reader, path string) ([]Event, int, error) {
	var evs []Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line, bad, badLine := 0, 0, 0
	for sc.Scan() {
		line++
		if len(sc.Bytes()) == 0 {
			continue
		}
		if bad > 0 { // a bad line followed by more lines: not a cut-off tail
			return nil, 0, fmt.Errorf("board store %s line %d: not a JSON event; move the file away to start an empty board", path, badLine)
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.User == "" {
			bad, badLine = 1, line
			continue
		}
		evs = append(evs, e)
	}
	if err := sc.Err(); err != nil {
		return nil, 0, fmt.Errorf("board store %s: %w", path, err)
	}
	return evs, bad, nil
}

// Add records e: appended to the file first, then kept in memory.
func (s *Store) Add(e Event) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("board store: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.file.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("board store %s: %w", s.path, err)
	}
	s.events = append(s.events, e)
	return nil
}

// Events returns a copy of every event, oldest first.
func (s *Store) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Close closes the file.
func (s *Store) Close() error { return s.file.Close() }

// CheckState is one check of one notebook for one participant.
type CheckState struct {
	Notebook string    `json:"notebook"`
	Check    string    `json:"check"`
	Status   string    `json:"status"` // Pass, Fail or NotRun
	Time     time.Time `json:"time,omitzero"`
}

// Participant is one row of the board.
type Participant struct {
	Name     string       `json:"name"`
	Notebook string       `json:"notebook"` // of the last report
	LastSeen time.Time    `json:"last_seen,omitzero"`
	Passed   int          `json:"passed"`
	Failed   int          `json:"failed"`
	NotRun   int          `json:"not_run"`
	Checks   []CheckState `json:"checks"` // every check of every notebook reported from
}

// Catalog is the self-checks each notebook holds, in order (see ScanNotebooks).
type Catalog map[string][]string

// State is the board now: a row per participant, sorted by name. A
// participant in names who has reported nothing gets an empty row.
func State(events []Event, cat Catalog, names []string) []Participant {
	type key struct{ nb, check string }
	type person struct {
		p      Participant
		latest map[key]Event
		order  []key
	}
	people := map[string]*person{}
	get := func(n string) *person {
		if people[n] == nil {
			people[n] = &person{p: Participant{Name: n}, latest: map[key]Event{}}
		}
		return people[n]
	}
	for _, n := range names {
		get(n)
	}
	for _, e := range events {
		pp := get(e.User)
		k := key{e.Notebook, e.Check}
		if _, seen := pp.latest[k]; !seen {
			pp.order = append(pp.order, k)
		}
		pp.latest[k] = e
		pp.p.Notebook, pp.p.LastSeen = e.Notebook, e.Time
	}
	out := make([]Participant, 0, len(people))
	for _, pp := range people {
		var nbs []string
		for _, k := range pp.order {
			if !slices.Contains(nbs, k.nb) {
				nbs = append(nbs, k.nb)
			}
		}
		sort.Strings(nbs)
		for _, nb := range nbs {
			// the catalog's checks in notebook order, then any it does not list
			names := slices.Clone(cat[nb])
			for _, k := range pp.order {
				if k.nb == nb && !slices.Contains(names, k.check) {
					names = append(names, k.check)
				}
			}
			for _, c := range names {
				cs := CheckState{Notebook: nb, Check: c, Status: NotRun}
				if e, ok := pp.latest[key{nb, c}]; ok {
					cs.Status, cs.Time = Fail, e.Time
					if e.OK {
						cs.Status = Pass
					}
				}
				switch cs.Status {
				case Pass:
					pp.p.Passed++
				case Fail:
					pp.p.Failed++
				default:
					pp.p.NotRun++
				}
				pp.p.Checks = append(pp.p.Checks, cs)
			}
		}
		out = append(out, pp.p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Point is the room at one moment: checks passing and failing (each
// participant's latest result of each check), and participants who have
// reported.
type Point struct {
	Time         time.Time `json:"time"`
	Passed       int       `json:"passed"`
	Failed       int       `json:"failed"`
	Participants int       `json:"participants"`
}

// History is the room's progress after each event, thinned to at most max
// points (the last point of each of max equal time buckets; max < 2 keeps
// every point).
func History(events []Event, max int) []Point {
	type key struct{ user, nb, check string }
	latest := map[key]bool{}
	users := map[string]bool{}
	passed, failed := 0, 0
	pts := make([]Point, 0, len(events))
	for _, e := range events {
		k := key{e.User, e.Notebook, e.Check}
		if old, seen := latest[k]; seen {
			if old {
				passed--
			} else {
				failed--
			}
		}
		latest[k] = e.OK
		if e.OK {
			passed++
		} else {
			failed++
		}
		users[e.User] = true
		pts = append(pts, Point{Time: e.Time, Passed: passed, Failed: failed, Participants: len(users)})
	}
	if max < 2 || len(pts) <= max {
		return pts
	}
	first, last := pts[0].Time, pts[len(pts)-1].Time
	span := last.Sub(first)
	if span <= 0 {
		return pts[len(pts)-1:]
	}
	out := make([]Point, 0, max)
	bucket := func(t time.Time) int { return min(int(float64(t.Sub(first))/float64(span)*float64(max)), max-1) }
	for i, p := range pts {
		if i == len(pts)-1 || bucket(pts[i+1].Time) != bucket(p.Time) {
			out = append(out, p)
		}
	}
	return out
}

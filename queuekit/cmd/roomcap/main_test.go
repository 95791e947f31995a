package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/roomcap"
)

// fixture: alone, two cells of 1 CPU second each (wall 1 s); two at once on
// a 2-core host whose other work used 1 core: 1 core left, so by hand each
// cell takes 2 s (half a core each). measured2 is what the N = 2 step saw.
func fixture(t *testing.T, measured2 float64) string {
	t.Helper()
	cells := func(wall float64) []roomcap.Cell {
		return []roomcap.Cell{{Notebook: "00-welcome", Index: 1, Wall: wall, CPU: 1, MemPeak: 5e8},
			{Notebook: "00-welcome", Index: 2, Wall: wall, CPU: 1, MemPeak: 6e8}}
	}
	m := measurement{Cores: 2, MemTotal: 24e9, CPULimit: 1, MemLimit: "2G", Steps: []step{
		{N: 1, Kind: "sweep", Notebooks: []string{"00-welcome"}, Cores: 2, BackgroundCores: 1, LoadStart: []float64{3, 2, 1}, LoadEnd: []float64{4, 2, 1},
			Participants: []participant{{Name: "cap1-1", SpawnSeconds: 30, SpawnCPU: 20, MemPeak: 9e8, CellCounts: map[string]int{"00-welcome": 2}, Cells: cells(1)}}},
		{N: 2, Kind: "sweep", Notebooks: []string{"00-welcome"}, Cores: 2, BackgroundCores: 1, LoadStart: []float64{5, 2, 1}, LoadEnd: []float64{6, 2, 1},
			Participants: []participant{
				{Name: "cap2-1", MemPeak: 9e8, CellCounts: map[string]int{"00-welcome": 2}, Cells: cells(measured2)},
				{Name: "cap2-2", MemPeak: 9e8, CellCounts: map[string]int{"00-welcome": 2}, Cells: cells(measured2)}}},
	}}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "capacity.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestModelBesideMeasurementAndDocs(t *testing.T) {
	in := fixture(t, 2)
	doc := filepath.Join(t.TempDir(), "room.md")
	if err := os.WriteFile(doc, []byte("# Room\n\nbefore\n"+beginMark+"\nold table\n"+endMark+"\nafter\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-in", in, "-docs", doc, "-rooms", "30"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	// N = 2: measured p95 2.0 s, model 2.0 s on the 1 core left; spawn: 10 s
	// without a core, then 20 CPU seconds each on one core: 10 + 40 = 50 s.
	if !strings.Contains(out.String(), "| 2 | 0 s / 50 s | 2.0 s | 2.0 s | 2.0 s | 1.00 (within ±35 %) | 1.80 GB | 1.00 of 2 |") {
		t.Errorf("N = 2 row missing or wrong:\n%s", out.String())
	}
	// 30 participants of 1-CPU-second cells, limit 2 × 1 s: 15 cores (30/c <= 2).
	if !strings.Contains(out.String(), "| one | 30 | 15 | 2.0 s (2.0 s) |") {
		t.Errorf("room of 30 row missing or wrong:\n%s", out.String())
	}
	b, _ := os.ReadFile(doc)
	s := string(b)
	if !strings.Contains(s, "before\n"+beginMark) || strings.Contains(s, "old table") || !strings.HasSuffix(s, endMark+"\nafter\n") ||
		!strings.Contains(s, "| one | 30 | 15 |") {
		t.Errorf("docs not rewritten between the marks:\n%s", s)
	}
}

func TestModelOutsideToleranceFails(t *testing.T) {
	var out, errb bytes.Buffer
	// measured 4 s where the model says 2 s: ratio 0.5, outside ±35 %.
	if code := run([]string{"-in", fixture(t, 4)}, &out, &errb); code != 1 || !strings.Contains(out.String(), "**outside**") {
		t.Errorf("exit %d, want 1 with the row marked outside:\n%s\n%s", code, out.String(), errb.String())
	}
}

func TestBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"-in", filepath.Join(t.TempDir(), "missing.json")},
		{"-in", fixture(t, 2), "-rooms", "thirty"},
		{"-in", fixture(t, 2), "-tolerance", "0"},
	} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 || strings.Count(strings.TrimSpace(errb.String()), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line", args, code, errb.String())
		}
	}
	doc := filepath.Join(t.TempDir(), "room.md")
	_ = os.WriteFile(doc, []byte("no marks\n"), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"-in", fixture(t, 2), "-docs", doc}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "room-capacity") {
		t.Errorf("docs without marks: exit %d, %q", code, errb.String())
	}
}

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
	// 30 participants of 1-CPU-second cells, limit 2 × 1 s: 15 cores (30/c <= 2),
	// half a core each, so every cell takes twice its time alone.
	if !strings.Contains(out.String(), "| one | 30 | 15 | 2.0 s (2.0 s) | 2.0x / 2.0x | 15 |") {
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

// One participant alone on a 2-core host whose other work used 1.5 cores on
// average over the step (0.5 free), cap 1. By hand, a cell's no-core part is
// wall − CPU/min(cap, its free cores): cell 1, 12 s with 8 CPU s while 1 core was free, is 12 − 8 = 4 s
// without a core and 8 s of work; replayed with its own core, 12 s again. On
// the step's 0.5 cores it would be all work (8/0.5 = 16 > 12) and take 16 s.
// Cell 2, 10 s with 2 CPU s on 0.25 cores: 2 s without a core, 10 s again.
// Cell 3, 1 s with 0.5 CPU s "on 0.25 cores": it had 0.5, all work, 1 s again.
// Cell 4, 0.1 s with 0.15 CPU s: more than the cap of 1 (a burst), 0.15 s at
// the cap. Measured p50/p95 of 12, 10, 1, 0.1 (empirical: the 2nd and 4th of
// 4): 1 s and 12 s; the model per cell: 12 s.
// Without free_cores (an older capacity.json) the N = 1 row is served with the
// step's 0.5 cores: 16 s, and the output says why.
func TestPerCellFreeCoresAtN1(t *testing.T) {
	const js = `{"cores": 2, "mem_total": 24000000000, "cpu_limit": 1, "mem_limit": "2G", "steps": [
	 {"n": 1, "kind": "sweep", "notebooks": ["00-welcome"], "cores": 2, "background_cores": 1.5, "load_start": [3, 2, 1], "load_end": [4, 2, 1],
	  "participants": [{"name": "cap1-1", "mem_peak": 900000000, "cell_counts": {"00-welcome": 4}, "cells": [
	   {"notebook": "00-welcome", "index": 1, "wall": 12, "cpu": 8, "mem_peak": 500000000, "free_cores": 1},
	   {"notebook": "00-welcome", "index": 2, "wall": 10, "cpu": 2, "mem_peak": 500000000, "free_cores": 0.25},
	   {"notebook": "00-welcome", "index": 3, "wall": 1, "cpu": 0.5, "mem_peak": 500000000, "free_cores": 0.25},
	   {"notebook": "00-welcome", "index": 4, "wall": 0.1, "cpu": 0.15, "mem_peak": 500000000, "free_cores": 0.25}]}]}]}`
	dir := t.TempDir()
	for _, tt := range []struct {
		name, json string
		want       []string
	}{
		{"per cell", js, []string{
			"| 1 | 0 s / 0 s | 1.0 s | 12.0 s | 12.0 s | 1.00 (within ±35 %) | 0.90 GB | per cell 0.25-1.00 (step 0.50) of 2 |",
			"2 cells measured alone used more CPU than their measured free cores allow",
			"1 cell measured alone used more than the containers' 1 CPU",
			"| 00-welcome | 1 | 12.00 s | 8.00 s | 0.50 GB | 1.00 |",
		}},
		{"older JSON", strings.ReplaceAll(strings.ReplaceAll(js, `, "free_cores": 0.25`, ""), `, "free_cores": 1`, ""), []string{
			"| 1 | 0 s / 0 s | 1.0 s | 12.0 s | 16.0 s | 1.33 (within ±35 %) | 0.90 GB | 0.50 of 2 |",
			"4 cells measured alone carry no free cores of their own",
			"| 00-welcome | 1 | 12.00 s | 8.00 s | 0.50 GB | not measured (step's 0.50) |",
		}},
	} {
		in := filepath.Join(dir, tt.name+".json")
		if err := os.WriteFile(in, []byte(tt.json), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		if code := run([]string{"-in", in, "-rooms", "2"}, &out, &errb); code != 0 {
			t.Fatalf("%s: exit %d: %s\n%s", tt.name, code, errb.String(), out.String())
		}
		for _, w := range tt.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: no %q in:\n%s", tt.name, w, out.String())
			}
		}
	}
	// A free_cores of 0 in the JSON is an error, not a NaN in the table.
	in := filepath.Join(dir, "zero.json")
	_ = os.WriteFile(in, []byte(strings.Replace(js, `"free_cores": 1`, `"free_cores": 0`, 1)), 0o644)
	var out, errb bytes.Buffer
	if code := run([]string{"-in", in}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "free cores 0") {
		t.Errorf("free_cores 0: exit %d, %q", code, errb.String())
	}
}

// A notebook the run did not reach reads "not measured", not a row of
// zeros, and the N = 1 participant's error (listed by the demand and by the
// check) is printed once.
func TestNotebookNotMeasuredAndErrorsOnce(t *testing.T) {
	in := fixture(t, 2)
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var m measurement
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	p := &m.Steps[0].Participants[0]
	p.CellCounts["06-timers"] = 8
	p.Errors = []string{"06-timers.ipynb: not run, past ROOM_CAPACITY_MAX_MINUTES=45"}
	m.Steps[0].Notebooks = append(m.Steps[0].Notebooks, "06-timers")
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	run([]string{"-in", in, "-rooms", "30"}, &out, &errb)
	if !strings.Contains(out.String(), "| 06-timers | not measured (0 of 8) |") {
		t.Errorf("no 'not measured' row for 06-timers:\n%s", out.String())
	}
	if n := strings.Count(out.String(), "N=1 cap1-1: 06-timers.ipynb: not run"); n != 1 {
		t.Errorf("the N = 1 error is listed %d times, want once:\n%s", n, out.String())
	}
}

// Two sweeps in one run, session one then session two, each checked against
// its own N = 1 participant. Session two's cells (05-run-the-night) are 4 s
// with 1 CPU second: 3 s need no core. Two participants on 2 free cores with
// a cap of 1 get a core each, so by hand the model gives 4 s again; measured
// 4 s: ratio 1.00. Replayed with session one's cells instead (1 s of work
// each on 1 free core: 2 s) the row would read 2.0 s.
func TestOneCheckPerSweep(t *testing.T) {
	var m measurement
	b, err := os.ReadFile(fixture(t, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	two := func(wall float64) []roomcap.Cell {
		return []roomcap.Cell{{Notebook: "05-run-the-night", Index: 1, Wall: wall, CPU: 1, MemPeak: 7e8, FreeCores: roomcap.Cores(2)}}
	}
	nb := []string{"05-run-the-night"}
	m.Started, m.Ended = 1.7e9, 1.7e9+30*60
	m.Steps = append(m.Steps,
		step{N: 1, Kind: "sweep", Sweep: 1, Notebooks: nb, Cores: 2, LoadStart: []float64{1, 1, 1}, LoadEnd: []float64{1, 1, 1},
			Participants: []participant{{Name: "cap1p1", SpawnSeconds: 20, SpawnCPU: 10, MemPeak: 8e8, CellCounts: map[string]int{nb[0]: 1}, Cells: two(4)}}},
		step{N: 2, Kind: "sweep", Sweep: 1, Notebooks: nb, Cores: 2, LoadStart: []float64{1, 1, 1}, LoadEnd: []float64{2, 1, 1},
			Participants: []participant{
				{Name: "cap2p1", MemPeak: 8e8, CellCounts: map[string]int{nb[0]: 1}, Cells: two(4)},
				{Name: "cap2p2", MemPeak: 8e8, CellCounts: map[string]int{nb[0]: 1}, Cells: two(4)}}})
	b, err = json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "capacity.json")
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-in", in, "-rooms", "30"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	s := out.String()
	one, two2 := strings.Index(s, "**N participants at once, session one**"), strings.Index(s, "**N participants at once, session two**")
	if one < 0 || two2 < one {
		t.Fatalf("want a check for session one, then one for session two:\n%s", s)
	}
	if !strings.Contains(s, "during the run, which took 30 minutes (image builds included).") {
		t.Errorf("no run duration:\n%s", s)
	}
	if !strings.Contains(s[two2:], "| 2 | 0 s / 20 s | 4.0 s | 4.0 s | 4.0 s | 1.00 (within ±35 %) | 1.60 GB | 2.00 of 2 |") {
		t.Errorf("session two's N = 2 row missing or wrong:\n%s", s[two2:])
	}
	if !strings.Contains(s[one:two2], "| 2 | 0 s / 50 s | 2.0 s | 2.0 s | 2.0 s | 1.00 (within ±35 %) |") {
		t.Errorf("session one's N = 2 row missing or wrong:\n%s", s[one:two2])
	}
	// A sweep that does not start alone has no baseline: exit 1, one line.
	m.Steps = append(m.Steps, step{N: 2, Kind: "sweep", Sweep: 2, Notebooks: []string{"09-when-ml-helps"}, Cores: 2,
		Participants: []participant{{Name: "a"}, {Name: "b"}}})
	b, _ = json.Marshal(m)
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"-in", in}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "09-when-ml-helps starts with N = 2") {
		t.Errorf("a sweep without its N = 1: exit %d, %q", code, errb.String())
	}
}

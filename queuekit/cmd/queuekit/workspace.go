package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Participants work on their own copies of the notebooks, in workspace/
// (ignored by git), never on the committed notebooks/ that `make test` runs.

//go:embed launcher/language_info.py
var languageInfoPy string

//go:embed launcher/copy_notebooks.py
var copyNotebooksPy string

// runWorkspace is `queuekit workspace prepare|reset`:
//
//	prepare  copy each notebooks/NN-*.ipynb that workspace/ lacks; keep every
//	         copy that exists (it is someone's work) and name those whose
//	         committed notebook has changed since; refresh workspace/assets/
//	reset    (instructors; make reset-notebooks) move every copy to
//	         workspace/.previous/<time>/, then prepare fresh ones
//
// WORKSHOP_WORKSPACE chooses the folder (default <checkout>/workspace).
// Needs queuekit setup done.
func runWorkspace(ctx context.Context, args []string, _, stderr io.Writer) error {
	if len(args) != 1 || (args[0] != "prepare" && args[0] != "reset") {
		if helpAsked(args) {
			fmt.Fprintln(os.Stdout, "Usage: queuekit workspace prepare|reset (WORKSHOP_WORKSPACE: the folder, default workspace/)")
			return errHelpShown
		}
		return usagef("want queuekit workspace prepare|reset, got %q", strings.Join(args, " "))
	}
	l, err := newLauncher("workspace", "workspace.log", stderr)
	if err != nil {
		return err
	}
	defer l.close()
	if args[0] == "reset" {
		return l.resetWorkspace(ctx)
	}
	return l.prepareWorkspace(ctx)
}

// workspaceDir is WORKSHOP_WORKSPACE or <checkout>/workspace.
func (l *launcher) workspaceDir() string {
	if d := os.Getenv("WORKSHOP_WORKSPACE"); d != "" {
		return d
	}
	return filepath.Join(l.root, "workspace")
}

// prepareWorkspace copies the notebooks workspace/ lacks, with the metadata
// this machine's gonb kernel writes, and the echarts asset.
func (l *launcher) prepareWorkspace(ctx context.Context) error {
	py := filepath.Join(l.venv, "bin", "python")
	if !isExec(py) || !isExec(filepath.Join(l.venv, "bin", "gonb")) {
		return fmt.Errorf("%s has no python or gonb; run make setup first", l.venv)
	}
	ws := l.workspaceDir()
	info := filepath.Join(l.venv, "share", "gonb-language-info.json")
	if err := l.languageInfo(ctx, py, info); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(ws, ".sources"), 0o755); err != nil {
		return err
	}
	out, err := l.output(ctx, l.root, py, "-c", copyNotebooksPy, filepath.Join(l.root, "notebooks"), ws, info)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" {
			l.say("  %s", line)
		}
	}
	// workspace/assets/ equal to notebooks/assets/ (the offline echarts
	// asset, served at /files/assets/...; hidden in the file browser).
	assets := filepath.Join(l.root, "notebooks", "assets")
	entries, err := os.ReadDir(assets)
	if err != nil {
		return fmt.Errorf("%w; run make setup", err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			if _, err := copyFile(filepath.Join(assets, e.Name()), filepath.Join(ws, "assets", e.Name()), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// languageInfo asks the gonb kernel for the language_info it writes into
// notebooks, once per gonb binary (keyed by its hash), into info.
func (l *launcher) languageInfo(ctx context.Context, py, info string) error {
	h, err := hashFiles(filepath.Join(l.venv, "bin", "gonb"))
	if err != nil {
		return err
	}
	key := h[:16]
	if b, err := os.ReadFile(info); err == nil && strings.Contains(string(b), `"gonb_sha256_16": "`+key+`"`) {
		return nil
	}
	l.say("  asking the gonb kernel for the metadata it writes into notebooks (once)")
	if err := l.run(ctx, "starting the gonb kernel once", l.root, py, "-c", languageInfoPy, info, key); err != nil {
		return fmt.Errorf("could not start the gonb kernel to read its language_info (check: jupyter kernelspec list): %w", err)
	}
	return nil
}

func (l *launcher) resetWorkspace(ctx context.Context) error {
	ws := l.workspaceDir()
	old, _ := filepath.Glob(filepath.Join(ws, "[0-9][0-9]-*.ipynb"))
	if len(old) > 0 {
		prev := filepath.Join(ws, ".previous", time.Now().Format("20060102-150405"))
		if err := os.MkdirAll(prev, 0o755); err != nil {
			return err
		}
		for _, f := range old {
			if err := os.Rename(f, filepath.Join(prev, filepath.Base(f))); err != nil {
				return err
			}
			os.Remove(filepath.Join(ws, ".sources", filepath.Base(f)+".sha256"))
		}
		l.say("moved %d notebook(s) to %s", len(old), prev)
	}
	return l.prepareWorkspace(ctx)
}

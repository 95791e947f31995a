package queuekit

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The README's screenshot (docs/screenshot.png) shows the notebook as it is
// now: make readme-shot writes the notebook's SHA-256 beside the picture, and
// any later change to that notebook fails here until the picture is taken
// again. A hash, not a file time: git does not keep modification times.
func TestReadmeScreenshotShowsTheCurrentNotebook(t *testing.T) {
	const shot = "../docs/screenshot.png"
	if _, err := os.Stat(shot); err != nil {
		t.Fatalf("%v: the README shows it; run make readme-shot", err)
	}
	b, err := os.ReadFile(shot + ".sha256")
	if err != nil {
		t.Fatalf("%v: make readme-shot writes it beside the picture", err)
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 || !strings.HasPrefix(fields[1], "notebooks/") || len(fields[0]) != 64 {
		t.Fatalf("%s.sha256 holds %q, want \"<sha256>  notebooks/NN-name.ipynb\"", shot, b)
	}
	nb, err := os.ReadFile(filepath.Join("..", fields[1]))
	if err != nil {
		t.Fatalf("the screenshot shows %s: %v", fields[1], err)
	}
	sum := sha256.Sum256(nb)
	if got := hex.EncodeToString(sum[:]); got != fields[0] {
		t.Fatalf("%s changed after the README's screenshot was taken (sha256 %s, the picture's %s): run make readme-shot README_SHOT_NOTEBOOK=%s",
			fields[1], got[:12], fields[0][:12], filepath.Base(fields[1]))
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "](docs/screenshot.png)") {
		t.Error("README.md does not show docs/screenshot.png")
	}
}

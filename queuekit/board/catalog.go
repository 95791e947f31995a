package board

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// checkCall matches a self-check call with a literal name: lab.CheckTrue("name", …).
var checkCall = regexp.MustCompile(`\blab\.(Check[A-Za-z]*)(?:\[[^\]]*\])?\(\s*("(?:[^"\\\n]|\\.)*")`)

// FixedChecks are the self-checks whose name is inside lab/ttllab, not in the
// call: the function's name and the name it reports.
var FixedChecks = map[string]string{
	"CheckTTLChoice": "the jobs a TTL timer serves on AWS",
}

var fixedCall = regexp.MustCompile(`\bttllab\.(CheckTTLChoice)\(`)

// ScanNotebooks lists the self-checks of every notebook (*.ipynb) in dir:
// each lab.Check… call of a code cell whose name is a string literal (or one
// of FixedChecks), in the notebook's order, once each. A check whose name is
// computed is not listed; it shows on the board once it reports.
func ScanNotebooks(dir string) (Catalog, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.ipynb"))
	if err != nil {
		return nil, fmt.Errorf("notebooks %s: %w", dir, err)
	}
	cat := Catalog{}
	for _, f := range files {
		names, err := notebookChecks(f)
		if err != nil {
			return nil, err
		}
		cat[filepath.Base(f)] = names
	}
	return cat, nil
}

func notebookChecks(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("notebook %s: %w", path, err)
	}
	var nb struct {
		Cells []struct {
			Type   string          `json:"cell_type"`
			Source json.RawMessage `json:"source"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &nb); err != nil {
		return nil, fmt.Errorf("notebook %s: not a notebook: %w", path, err)
	}
	var names []string
	add := func(n string) {
		for _, m := range names {
			if m == n {
				return
			}
		}
		names = append(names, n)
	}
	for i, c := range nb.Cells {
		if c.Type != "code" {
			continue
		}
		src, err := cellSource(c.Source)
		if err != nil {
			return nil, fmt.Errorf("notebook %s cell %d: %w", path, i+1, err)
		}
		type hit struct {
			at   int
			name string
		}
		var hits []hit
		for _, m := range checkCall.FindAllStringSubmatchIndex(src, -1) {
			name, err := strconv.Unquote(src[m[4]:m[5]])
			if err == nil {
				hits = append(hits, hit{m[0], name})
			}
		}
		for _, m := range fixedCall.FindAllStringSubmatchIndex(src, -1) {
			hits = append(hits, hit{m[0], FixedChecks[src[m[2]:m[3]]]})
		}
		for len(hits) > 0 { // in source order
			k := 0
			for j := range hits {
				if hits[j].at < hits[k].at {
					k = j
				}
			}
			add(hits[k].name)
			hits = append(hits[:k], hits[k+1:]...)
		}
	}
	return names, nil
}

// cellSource is a cell's source: a string or a list of lines.
func cellSource(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var lines []string
	if err := json.Unmarshal(raw, &lines); err != nil {
		return "", fmt.Errorf("source is neither a string nor a list of lines")
	}
	return strings.Join(lines, ""), nil
}

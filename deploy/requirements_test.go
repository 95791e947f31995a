package deploy

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// bookwormPython is the python3 of Debian 12 (bookworm), the interpreter the
// lab image installs (apt-get install python3 on golang:X.Y.Z-bookworm).
// Debian keeps a stable release's upstream version: bookworm's python3 is
// 3.11.2 and stays 3.11.2 (security fixes come as 3.11.2-6+debNuN).
const bookwormPython = "3.11.2"

// pins reads requirements.txt: normalized name -> version, one "name==version" a line.
func pins(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, ver, ok := strings.Cut(line, "==")
		if !ok || strings.ContainsAny(ver, " ;<>=!~") {
			t.Fatalf("%s:%d: %q is not an exact pin name==version", path, n, line)
		}
		out[normalize(name)] = ver
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var nonAlnum = regexp.MustCompile(`[-_.]+`)

// normalize is PEP 503's name normalization (wheel file names use "_").
func normalize(name string) string { return strings.ToLower(nonAlnum.ReplaceAllString(name, "-")) }

// pipDownload resolves the requirements file for a Python version the way
// pip would install it there (Requires-Python, markers, every dependency),
// using wheels only so nothing is built, and returns the downloaded wheels.
// find-links from the machine's pip configuration are dropped so only PyPI
// (the index a user's build reaches) can satisfy a pin.
func pipDownload(t *testing.T, reqs, pyVersion string) (wheels []string, output string, err error) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("python3", "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
		"--only-binary=:all:", "--python-version", pyVersion, "-d", dir, "-r", reqs)
	cmd.Env = append(os.Environ(), "PIP_FIND_LINKS=", "PIP_NO_INPUT=1",
		"PIP_CACHE_DIR="+filepath.Join(root(t), ".cache", "pip"))
	out, err := cmd.CombinedOutput()
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, e := range entries {
		wheels = append(wheels, e.Name())
	}
	return wheels, string(out), err
}

// hostPython is the version of the python3 on PATH, the one make setup
// makes the host's venv with (make workshop).
func hostPython(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("python3", "-c", "import platform; print(platform.python_version())").Output()
	if err != nil {
		t.Fatalf("python3 on PATH: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestRequirementsInstallOnTheLabsAndTheHostsPython resolves requirements.txt
// for bookworm's Python (the lab image) and for the python3 on PATH (the host
// path): every pin must install there, and the resolution must need nothing
// that is not pinned (a complete lock).
func TestRequirementsInstallOnTheLabsAndTheHostsPython(t *testing.T) {
	reqs := filepath.Join(root(t), "requirements.txt")
	want := pins(t, reqs)
	versions := []string{bookwormPython}
	if h := hostPython(t); h != bookwormPython {
		versions = append(versions, h)
	}
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			wheels, out, err := pipDownload(t, reqs, v)
			if err != nil {
				t.Fatalf("requirements.txt does not install on Python %s: pip download: %v\n%s", v, err, out)
			}
			got := map[string]string{}
			for _, w := range wheels {
				parts := strings.Split(strings.TrimSuffix(w, ".whl"), "-")
				if len(parts) < 5 {
					t.Errorf("unexpected file %s (not a wheel)", w)
					continue
				}
				got[normalize(parts[0])] = parts[1]
			}
			var unpinned []string
			for name, ver := range got {
				if pin, ok := want[name]; !ok {
					unpinned = append(unpinned, name+"=="+ver)
				} else if pin != ver {
					t.Errorf("%s: pip chose %s on Python %s, requirements.txt pins %s", name, ver, v, pin)
				}
			}
			sort.Strings(unpinned)
			if len(unpinned) > 0 {
				t.Errorf("on Python %s pip also needs %v, which requirements.txt does not pin", v, unpinned)
			}
			if len(got) != len(want) {
				t.Errorf("on Python %s pip downloaded %d distributions, requirements.txt pins %d", v, len(got), len(want))
			}
		})
	}
}

// TestRequirementsCheckCatchesAPinTooNewForBookworm: the check above can
// fail. soupsieve 4.1.2 requires Python >= 3.11.5 (its Requires-Python on
// PyPI), so a lock holding it must not resolve for 3.11.2, as it did not in
// the lab image (issue 17), and must resolve for 3.11.7.
func TestRequirementsCheckCatchesAPinTooNewForBookworm(t *testing.T) {
	reqs := filepath.Join(t.TempDir(), "requirements.txt")
	if err := os.WriteFile(reqs, []byte("soupsieve==4.1.2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, out, err := pipDownload(t, reqs, bookwormPython); err == nil {
		t.Errorf("soupsieve==4.1.2 resolved for Python %s; the lock check cannot see a pin the lab's Python rejects\n%s", bookwormPython, out)
	} else if !strings.Contains(out, "soupsieve") {
		t.Errorf("pip failed without naming soupsieve: %v\n%s", err, out)
	}
	if _, out, err := pipDownload(t, reqs, "3.11.7"); err != nil {
		t.Errorf("soupsieve==4.1.2 does not resolve for 3.11.7 either, so the failure above proves nothing: %v\n%s", err, out)
	}
}

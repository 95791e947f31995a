package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionAtLeast(t *testing.T) {
	for _, c := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"3.11", 3, 11, true}, {"3.12", 3, 11, true}, {"3.10", 3, 11, false}, {"4.0", 3, 11, true},
		{"1.26.8", 1, 26, true}, {"1.26rc1", 1, 26, true}, {"1.25.3", 1, 26, false}, {"", 1, 26, false},
	} {
		if got := versionAtLeast(c.v, c.major, c.minor); got != c.want {
			t.Errorf("versionAtLeast(%q, %d, %d) = %v, want %v", c.v, c.major, c.minor, got, c.want)
		}
	}
}

// Each missing prerequisite is one line naming its install on macOS,
// Debian/Ubuntu and Windows (WSL2).
func TestPrereqLineNamesEveryPlatform(t *testing.T) {
	for _, p := range []prereq{prereqGo, prereqPython, prereqJava} {
		line := p.line("not found")
		if strings.Contains(line, "\n") {
			t.Errorf("%s: more than one line: %q", p.name, line)
		}
		for _, want := range []string{"macOS: brew install", "Debian/Ubuntu:", "Windows:", "WSL2"} {
			if !strings.Contains(line, want) {
				t.Errorf("%s: %q lacks %q", p.name, line, want)
			}
		}
	}
}

func TestListsKernel(t *testing.T) {
	listed := "Available kernels:\n  gonb    /x/.venv/share/jupyter/kernels/gonb\n  python3 /y\n"
	if !listsKernel(listed, "gonb") || listsKernel(listed, "go") || listsKernel("", "gonb") {
		t.Error("listsKernel misreads jupyter kernelspec list")
	}
}

// The echarts pin is the version tools/echarts/package-lock.json pins (the
// browser and chart tests install that one with npm): same version, same
// npm integrity.
func TestEChartsPinMatchesThePackageLock(t *testing.T) {
	b, err := os.ReadFile("../../../tools/echarts/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	var lock struct {
		Packages map[string]struct{ Version, Integrity, Resolved string } `json:"packages"`
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		t.Fatal(err)
	}
	p := lock.Packages["node_modules/echarts"]
	if p.Integrity != echarts.Integrity {
		t.Errorf("package-lock.json's echarts integrity %q, the launcher pins %q", p.Integrity, echarts.Integrity)
	}
	if !strings.HasSuffix(echarts.URL, "/echarts-"+p.Version+".tgz") {
		t.Errorf("package-lock.json pins echarts %s, the launcher downloads %s", p.Version, echarts.URL)
	}
}

func TestTgzMember(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{"package/package.json": "{}", echartsMember: "echarts();"} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	tgz := filepath.Join(t.TempDir(), "e.tgz")
	if err := os.WriteFile(tgz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := tgzMember(tgz, echartsMember)
	if err != nil || string(got) != "echarts();" {
		t.Errorf("tgzMember = %q, %v", got, err)
	}
	if _, err := tgzMember(tgz, "package/missing.js"); err == nil {
		t.Error("a missing member is no error")
	}
}

func TestKernelGoflags(t *testing.T) {
	t.Setenv("KERNEL_GOFLAGS", "")
	os.Unsetenv("KERNEL_GOFLAGS") // restored by t.Setenv's cleanup
	t.Setenv("GOENV", "off")      // only the GOFLAGS each case sets
	l := &launcher{root: t.TempDir()}
	l.log, _ = os.Create(filepath.Join(l.root, "log"))
	defer l.log.Close()
	for _, c := range []struct{ goflags, want string }{
		{"", "-ldflags=-s -gcflags=all=-dwarf=false"},
		{"-modcacherw -mod=mod", "-modcacherw -ldflags=-s -gcflags=all=-dwarf=false"},
		{"-ldflags=-w", "-ldflags=-w -gcflags=all=-dwarf=false"},
		{"-gcflags=-N", "-gcflags=-N -ldflags=-s"},
	} {
		t.Setenv("GOFLAGS", c.goflags)
		got, err := l.kernelGoflags(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("GOFLAGS=%q: kernel GOFLAGS %q, want %q", c.goflags, got, c.want)
		}
	}
	t.Setenv("KERNEL_GOFLAGS", "")
	if got, _ := l.kernelGoflags(t.Context()); got != "" {
		t.Errorf("KERNEL_GOFLAGS set empty: got %q, want it as set", got)
	}
}

// TestGoplsWrapper: .venv/bin/gopls starts .venv/libexec/gopls with its
// arguments under GOMEMLIMIT (GOPLS_GOMEMLIMIT overrides it), also from a
// checkout whose path holds a quote and a space.
func TestGoplsWrapper(t *testing.T) {
	root := filepath.Join(t.TempDir(), "it's a checkout")
	cache := filepath.Join(root, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := "#!/bin/sh\necho \"limit=$GOMEMLIMIT args=$*\"\n"
	if err := os.WriteFile(filepath.Join(cache, "gopls"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	l := &launcher{root: root, venv: filepath.Join(root, ".venv")}
	if err := os.MkdirAll(filepath.Join(l.venv, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := l.installGopls(cache); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ env, want string }{
		{"", "limit=224MiB args=-listen unix;/tmp/x"},
		{"GOPLS_GOMEMLIMIT=off", "limit=off args=-listen unix;/tmp/x"},
	} {
		cmd := exec.Command(filepath.Join(l.venv, "bin", "gopls"), "-listen", "unix;/tmp/x")
		cmd.Env = append(os.Environ(), "GOPLS_GOMEMLIMIT=")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.env, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.env, got, c.want)
		}
	}
}

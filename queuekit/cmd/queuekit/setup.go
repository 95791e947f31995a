package main

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
)

// runSetup is `queuekit setup` (make setup): install everything the
// workshop runs on into the checkout, each step skipped when it is done:
//
//  1. .venv/: a Python venv with JupyterLab, nbclient, nbformat
//     (requirements.txt, pinned; from .cache/wheels with --no-index when
//     make prefetch filled it for this requirements.txt and interpreter)
//  2. .venv/bin/: gonb, goimports and gopls, built from tools/go.mod once into
//     .cache/tools/<hash of go.mod, go.sum, Go version>/ and copied from there.
//     A kernel needs gonb and goimports to run a cell; gopls only serves
//     completion and hover, so the workshop builds it after its URL
//  3. .venv/share/jupyter/kernels/gonb/: the GoNB kernelspec, inside the venv
//     (never in ~/.local), started with -go_work=<checkout> so every kernel
//     (a restarted one too) builds the workshop module from this checkout; its
//     env puts .venv/bin and the go binary's directory first on PATH and sets
//     GOFLAGS to go env GOFLAGS (less -mod=...) plus -ldflags=-s, unless
//     KERNEL_GOFLAGS is set (docs/speed.md, Cells)
//  4. notebooks/assets/echarts.min.js: ECharts 5.4.3 from the npm registry's
//     tarball, downloaded over HTTPS with its pinned SHA-256 and npm integrity
//     (no npm), served by Jupyter so charts draw with no internet
//  5. JupyterLab setting defaults (jupyter/overrides.json: no news, no update
//     check) into .venv/share/jupyter/lab/settings/overrides.d/
//  6. the Go build cache, warmed the way GoNB builds a cell, so the first
//     notebook cell is fast (--skip-warm or SETUP_SKIP_WARM=1 skips it)
//
// Writes nothing in $HOME but Go's module and build caches.
func runSetup(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags("setup")
	skipWarm := fs.Bool("skip-warm", os.Getenv("SETUP_SKIP_WARM") == "1", "skip step 6, the Go build cache warm-up (also SETUP_SKIP_WARM=1)")
	if err := parse(fs, args); err != nil {
		return err
	}
	l, err := newInstaller(ctx, "setup", stderr)
	if err != nil {
		return err
	}
	defer l.close()
	if err := l.setup(ctx, setupOptions{skipWarm: *skipWarm}); err != nil {
		return err
	}
	l.step("done")
	return nil
}

// setupOptions choose what setup leaves out.
type setupOptions struct {
	skipWarm, deferGopls bool
	numbered             string // "1/5 " when the steps are part of a larger one
}

// setup runs the six steps.
func (l *launcher) setup(ctx context.Context, o setupOptions) error {
	steps := []struct {
		title string
		fn    func(context.Context, setupOptions) error
	}{
		{"Python venv with JupyterLab (pinned)", l.setupVenv},
		{"gonb, goimports, gopls", l.setupTools},
		{"the gonb kernelspec", l.setupKernel},
		{"the offline ECharts asset", l.setupECharts},
		{"JupyterLab settings", l.setupJupyterConfig},
		{"warming the Go build cache", l.warmCache},
	}
	for i, s := range steps {
		l.step("%ssetup %d/%d: %s", o.numbered, i+1, len(steps), s.title)
		if err := s.fn(ctx, o); err != nil {
			return fmt.Errorf("setup step %d (%s): %w", i+1, s.title, err)
		}
	}
	return nil
}

func (l *launcher) setupVenv(ctx context.Context, _ setupOptions) error {
	req := filepath.Join(l.root, "requirements.txt")
	want, err := hashFiles(req)
	if err != nil {
		return err
	}
	py := filepath.Join(l.venv, "bin", "python")
	if isExec(py) && l.stampOK("requirements", want) {
		l.say("  venv up to date (%s)", l.venv)
		return nil
	}
	if !isExec(py) {
		if err := l.run(ctx, "creating the venv", l.root, pythonExe(), "-m", "venv", l.venv); err != nil {
			return fmt.Errorf("%w; on Debian/Ubuntu install python3-venv and rerun", err)
		}
	}
	pip := []string{"-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input"}
	from := "PyPI"
	if ok, _ := l.wheelsComplete(ctx, want); ok {
		pip = append(pip, "--no-index", "--find-links", filepath.Join(l.root, ".cache", "wheels"))
		from = ".cache/wheels (make prefetch), not PyPI"
	}
	l.say("  installing requirements.txt into the venv (pinned) from %s", from)
	if err := l.run(ctx, "installing JupyterLab and its requirements", l.root, py, append(pip, "-r", req)...); err != nil {
		return err
	}
	return l.stampSet("requirements", want)
}

// wheelsTag is what .cache/wheels/.complete holds when make prefetch filled
// it for this requirements.txt (hash) and the venv's interpreter.
func (l *launcher) wheelsTag(ctx context.Context, reqHash string) (string, error) {
	out, err := l.output(ctx, l.root, filepath.Join(l.venv, "bin", "python"), "-c",
		"import sys, sysconfig; print(sys.implementation.cache_tag + '-' + sysconfig.get_platform())")
	if err != nil {
		return "", err
	}
	return reqHash[:16] + "-" + strings.TrimSpace(out), nil
}

func (l *launcher) wheelsComplete(ctx context.Context, reqHash string) (bool, error) {
	tag, err := l.wheelsTag(ctx, reqHash)
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(filepath.Join(l.root, ".cache", "wheels", ".complete"))
	return err == nil && string(b) == tag, nil
}

// toolsWant is what the built tools depend on: tools/go.mod, go.sum and the
// Go version and platform; toolsCache is where they are built for it.
func (l *launcher) toolsWant(ctx context.Context) (string, error) {
	h, err := hashFiles(filepath.Join(l.root, "tools", "go.mod"), filepath.Join(l.root, "tools", "go.sum"))
	if err != nil {
		return "", err
	}
	out, err := l.output(ctx, l.root, "go", "env", "GOVERSION", "GOOS", "GOARCH")
	if err != nil {
		return "", err
	}
	return h + "-" + strings.ReplaceAll(out, "\n", "-"), nil
}

func (l *launcher) toolsCache(want string) string {
	return filepath.Join(l.root, ".cache", "tools", hashString(want)[:16])
}

var toolPackages = map[string]string{
	"gonb":      "github.com/janpfeifer/gonb",
	"goimports": "golang.org/x/tools/cmd/goimports",
	"gopls":     "golang.org/x/tools/gopls",
}

// buildTools go-installs tools into dir through a temporary directory, so a
// build cut short leaves nothing half-written.
func (l *launcher) buildTools(ctx context.Context, dir string, tools ...string) error {
	tmp := dir + ".tmp-" + tools[0]
	os.RemoveAll(tmp)
	for _, d := range []string{tmp, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	defer os.RemoveAll(tmp)
	args := []string{"install"}
	for _, t := range tools {
		args = append(args, toolPackages[t])
	}
	cmd := l.command(ctx, filepath.Join(l.root, "tools"), "go", args...)
	cmd.Env = append(os.Environ(), "GOBIN="+tmp)
	if err := l.alive("building "+strings.Join(tools, ", "), cmd.Run); err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		return fmt.Errorf("go install %s (tools/go.mod): %w (its output: %s)", strings.Join(tools, " "), err, l.logPath)
	}
	for _, t := range tools {
		if err := os.Rename(filepath.Join(tmp, t), filepath.Join(dir, t)); err != nil {
			return err
		}
	}
	return nil
}

// installTools copies built tools into the venv, by rename: a running kernel
// keeps its binary.
func (l *launcher) installTools(dir string, tools ...string) error {
	for _, t := range tools {
		b, err := os.ReadFile(filepath.Join(dir, t))
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(l.venv, "bin", t), b, 0o755); err != nil {
			return err
		}
	}
	return nil
}

func (l *launcher) setupTools(ctx context.Context, o setupOptions) error {
	want, err := l.toolsWant(ctx)
	if err != nil {
		return err
	}
	cache := l.toolsCache(want)
	bin := filepath.Join(l.venv, "bin")
	if isExec(filepath.Join(bin, "gonb")) && isExec(filepath.Join(bin, "goimports")) && l.stampOK("tools", want) {
		l.say("  gonb, goimports up to date")
	} else {
		var need []string
		for _, t := range []string{"gonb", "goimports"} {
			if !isExec(filepath.Join(cache, t)) {
				need = append(need, t)
			}
		}
		if len(need) > 0 {
			l.say("  building %s (tools/go.mod) into %s; minutes on a cold Go cache", strings.Join(need, ", "), cache)
			if err := l.buildTools(ctx, cache, need...); err != nil {
				return err
			}
		}
		if err := l.installTools(cache, "gonb", "goimports"); err != nil {
			return err
		}
		l.say("  gonb, goimports copied from %s into %s", cache, bin)
		if err := l.stampSet("tools", want); err != nil {
			return err
		}
	}
	if o.deferGopls && !isExec(filepath.Join(cache, "gopls")) {
		l.say("  gopls (completion and hover only) is built after the URL")
		return nil
	}
	return l.setupGopls(ctx)
}

// setupGopls builds gopls (when its cache lacks it) and installs it.
func (l *launcher) setupGopls(ctx context.Context) error {
	want, err := l.toolsWant(ctx)
	if err != nil {
		return err
	}
	cache := l.toolsCache(want)
	stamp := want + "-wrapper-" + fmt.Sprintf("%x", sha256.Sum256([]byte(goplsWrapper)))[:12]
	if isExec(filepath.Join(l.venv, "bin", "gopls")) && isExec(filepath.Join(l.venv, "libexec", "gopls")) && l.stampOK("gopls", stamp) {
		l.say("  gopls up to date")
		return nil
	}
	if !isExec(filepath.Join(cache, "gopls")) {
		l.say("  building gopls (tools/go.mod) into %s; minutes on a cold Go cache", cache)
		if err := l.buildTools(ctx, cache, "gopls"); err != nil {
			return err
		}
	}
	if err := l.installGopls(cache); err != nil {
		return err
	}
	l.say("  gopls copied from %s into %s (started through %s)", cache, filepath.Join(l.venv, "libexec"), filepath.Join(l.venv, "bin", "gopls"))
	return l.stampSet("gopls", stamp)
}

// goplsWrapper is .venv/bin/gopls (%s: the real one's path, quoted for
// sh), which GoNB finds on the kernel's PATH and starts once a kernel: the
// real gopls (.venv/libexec/gopls) under a soft memory limit. After a
// participant's first completion or hover gopls has type-checked the
// workspace: 275-410 MB resident without a limit, 152-257 MB with 224 MiB
// for 7 % more of its CPU then; 160 MiB held it at 126-151 MB but nearly
// doubled its CPU (`bench/cells.py --gopls`, docs/speed.md, Cells).
const goplsWrapper = `#!/bin/sh
# gopls for the Go kernel's completion and hover, written by queuekit setup:
# the real gopls under a soft memory limit (docs/speed.md, Cells).
# GOPLS_GOMEMLIMIT changes the limit ("off": none).
export GOMEMLIMIT="${GOPLS_GOMEMLIMIT:-224MiB}"
exec %s "$@"
`

// installGopls copies gopls from the tools cache into .venv/libexec and
// writes the wrapper that starts it into .venv/bin.
func (l *launcher) installGopls(cache string) error {
	b, err := os.ReadFile(filepath.Join(cache, "gopls"))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(l.venv, "libexec"), 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(l.venv, "libexec", "gopls"), b, 0o755); err != nil {
		return err
	}
	real := filepath.Join(l.venv, "libexec", "gopls")
	quoted := "'" + strings.ReplaceAll(real, "'", `'\''`) + "'" // for sh
	return writeAtomic(filepath.Join(l.venv, "bin", "gopls"), fmt.Appendf(nil, goplsWrapper, quoted), 0o755)
}

// kernelGoflags is the GOFLAGS a kernel's cells build with: go env GOFLAGS
// less any -mod=... (the kernel's go.work refuses it) plus -ldflags=-s
// (a quarter less CPU a link) and -gcflags=all=-dwarf=false (compiled
// packages without DWARF: a tenth to a sixth less again for a cell that
// links the AWS SDK; docs/speed.md, Cells), each unless they set it
// already. No cell reads DWARF or the symbol table; a panic still names the
// cell's line (pclntab stays). The build cache is warmed with the same flags
// (warm), or the first cell would compile every package again.
// KERNEL_GOFLAGS, when set (even empty), is used instead.
func (l *launcher) kernelGoflags(ctx context.Context) (string, error) {
	if v, ok := os.LookupEnv("KERNEL_GOFLAGS"); ok {
		return v, nil
	}
	out, err := l.output(ctx, l.root, "go", "env", "GOFLAGS")
	if err != nil {
		return "", err
	}
	var flags []string
	ld, gc := false, false
	for _, f := range strings.Fields(out) {
		if strings.HasPrefix(f, "-mod=") {
			continue
		}
		ld = ld || strings.HasPrefix(f, "-ldflags")
		gc = gc || strings.HasPrefix(f, "-gcflags")
		flags = append(flags, f)
	}
	if !ld {
		flags = append(flags, "-ldflags=-s")
	}
	if !gc {
		flags = append(flags, "-gcflags=all=-dwarf=false")
	}
	return strings.Join(flags, " "), nil
}

func (l *launcher) setupKernel(ctx context.Context, _ setupOptions) error {
	data := filepath.Join(l.venv, "share", "jupyter")
	spec := filepath.Join(data, "kernels", "gonb", "kernel.json")
	goBin, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	goBin, _ = filepath.Abs(goBin)
	goDir := filepath.Dir(goBin)
	goflags, err := l.kernelGoflags(ctx)
	if err != nil {
		return err
	}
	goenv, err := l.output(ctx, l.root, "go", "env", "GOENV")
	if err != nil {
		return err
	}
	goenv = strings.TrimSpace(goenv)
	config, err := l.kernelConfigDir()
	if err != nil {
		return err
	}
	tools, _ := hashFiles(filepath.Join(l.venv, ".setup", "tools"))
	want := tools + "-" + l.venv + "-" + goDir + "-go_work=" + l.root + "-goflags=" + goflags + "-config=" + config + "-goenv=" + goenv
	if _, err := os.Stat(spec); err == nil && l.stampOK("kernel", want) {
		l.say("  gonb kernelspec up to date (%s)", spec)
		return nil
	}
	if strings.Contains(l.root, ",") {
		return fmt.Errorf("the checkout's path %s holds a comma, which gonb -go_work cannot take; move it to a path without one", l.root)
	}
	// --force_deps: gopls may still be building; a kernel without it runs
	// cells and lacks only completion and hover.
	if err := l.run(ctx, "installing the gonb kernelspec", l.root, filepath.Join(l.venv, "bin", "gonb"),
		"--install", "--force_deps", "--go_work="+l.root); err != nil {
		return err
	}
	b, err := os.ReadFile(spec)
	if err != nil {
		return fmt.Errorf("gonb --install wrote no kernelspec: %w", err)
	}
	var ks map[string]any
	if err := json.Unmarshal(b, &ks); err != nil {
		return fmt.Errorf("%s: %w", spec, err)
	}
	argv, _ := ks["argv"].([]any)
	found := false
	for _, a := range argv {
		found = found || a == "-go_work="+l.root
	}
	if !found {
		return fmt.Errorf("gonb --install wrote no -go_work=%s into %s: is .venv/bin/gonb older than 0.11.3?", l.root, spec)
	}
	env, _ := ks["env"].(map[string]any)
	if env == nil {
		env = map[string]any{}
	}
	// jupyter_client expands ${PATH} in kernelspec env values; GOFLAGS is
	// fixed here, because an unset ${GOFLAGS} would stay as it is.
	env["PATH"] = filepath.Join(l.venv, "bin") + string(os.PathListSeparator) + goDir + string(os.PathListSeparator) + "${PATH}"
	env["GOFLAGS"] = goflags
	// Go telemetry off for what the kernel runs, through a config directory
	// of the kernel's own: gopls (one a kernel) then starts no telemetry
	// child, 38 MB resident each, and the go command writes no counters. The
	// user's own go env file stays the one `go env -w` wrote.
	env["XDG_CONFIG_HOME"] = config
	if goenv != "" {
		env["GOENV"] = goenv
	}
	ks["env"] = env
	out, err := json.MarshalIndent(ks, "", " ")
	if err != nil {
		return err
	}
	if err := writeAtomic(spec, append(out, '\n'), 0o644); err != nil {
		return err
	}
	listed, err := l.output(ctx, l.root, filepath.Join(l.venv, "bin", "jupyter"), "kernelspec", "list")
	if err != nil {
		return err
	}
	if !listsKernel(listed, "gonb") {
		return fmt.Errorf("jupyter does not list the gonb kernel after install; see %s", spec)
	}
	l.say("  gonb kernelspec installed (%s)", spec)
	return l.stampSet("kernel", want)
}

// kernelConfigDir is the kernel's XDG_CONFIG_HOME, inside .venv: it holds
// only go/telemetry/mode, "off" (golang.org/x/telemetry reads it there).
func (l *launcher) kernelConfigDir() (string, error) {
	dir := filepath.Join(l.venv, "share", "gonb-config")
	mode := filepath.Join(dir, "go", "telemetry", "mode")
	if err := os.MkdirAll(filepath.Dir(mode), 0o755); err != nil {
		return "", err
	}
	if b, err := os.ReadFile(mode); err == nil && string(b) == "off\n" {
		return dir, nil
	}
	return dir, writeAtomic(mode, []byte("off\n"), 0o644)
}

// listsKernel reports whether `jupyter kernelspec list` output names kernel.
func listsKernel(listed, kernel string) bool {
	for _, line := range strings.Split(listed, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == kernel {
			return true
		}
	}
	return false
}

// echarts is the ECharts build go-echarts v2.7.2 expects, from the npm
// registry (the integrity is package-lock.json's in tools/echarts).
var echarts = fetch.File{
	URL:       "https://registry.npmjs.org/echarts/-/echarts-5.4.3.tgz",
	Size:      8178136,
	SHA256:    "89f6b509a83b3694645a8ec0dc8808999bb96610eac9e718fbda4726bb694eaf",
	Integrity: "sha512-mYKxLxhzy6zyTi/FaEbJMOZU1ULGEQHaeIeuMR5L+JnJTpz+YR03mnnpBhbR4+UYJAgiXgpyTVLffPAjOTLkZA==",
}

const echartsMember = "package/dist/echarts.min.js"

func (l *launcher) setupECharts(ctx context.Context, _ setupOptions) error {
	dir := filepath.Join(l.root, ".cache", "echarts")
	err := l.alive("downloading "+echarts.Name(), func() error {
		return fetch.Get(ctx, dir, []fetch.File{echarts}, fetch.Options{Log: l.log, Prefix: "echarts"})
	})
	if err != nil {
		return err
	}
	js, err := tgzMember(filepath.Join(dir, echarts.Name()), echartsMember)
	if err != nil {
		return err
	}
	dest := filepath.Join(l.root, "notebooks", "assets", "echarts.min.js")
	if old, err := os.ReadFile(dest); err == nil && string(old) == string(js) {
		l.say("  echarts asset up to date (%s)", dest)
		return nil
	}
	if err := writeAtomic(dest, js, 0o644); err != nil {
		return fmt.Errorf("%w; make the checkout writable for this user (in Docker: start the lab with docker compose up, not --user)", err)
	}
	l.say("  echarts asset written to %s (served at /files/assets/echarts.min.js)", dest)
	return nil
}

// tgzMember returns one file of a .tgz.
func tgzMember(tgz, name string) ([]byte, error) {
	fh, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s has no %s", tgz, name)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", tgz, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}

func (l *launcher) setupJupyterConfig(_ context.Context, _ setupOptions) error {
	dest := filepath.Join(l.venv, "share", "jupyter", "lab", "settings", "overrides.d", "workshop.json")
	wrote, err := copyFile(filepath.Join(l.root, "jupyter", "overrides.json"), dest, 0o644)
	if err != nil {
		return err
	}
	if wrote {
		l.say("  JupyterLab settings installed (%s: no news prompt, no update check)", dest)
	} else {
		l.say("  JupyterLab settings up to date (%s)", dest)
	}
	return nil
}

// warmCache builds what the notebooks import the way GoNB builds a cell (a
// temporary module requiring the workshop module through a replace, `go
// get`, `go build -o`), so the compiled packages are in the build cache under
// the same action IDs. A failure is a warning: the notebooks still work.
func (l *launcher) warmCache(ctx context.Context, o setupOptions) error {
	if o.skipWarm {
		l.say("  skipping the build cache warm-up (--skip-warm)")
		return nil
	}
	err := l.warm(ctx)
	if err != nil && ctx.Err() == nil {
		l.say("  WARNING: warming the build cache failed (%v); the notebooks work, but the first cell will be slow", err)
		return nil
	}
	return err
}

func (l *launcher) warm(ctx context.Context) error {
	mod, err := l.output(ctx, l.root, "go", "list", "-m")
	if err != nil {
		return err
	}
	mod = strings.TrimSpace(mod)
	pkgs := map[string]bool{
		"github.com/janpfeifer/gonb/gonbui":              true,
		"github.com/janpfeifer/gonb/cache":               true,
		"github.com/go-echarts/go-echarts/v2/charts":     true,
		"github.com/go-echarts/go-echarts/v2/opts":       true,
		"github.com/go-echarts/go-echarts/v2/components": true,
	}
	// Every library package of the workshop; internal ones cannot be
	// imported from another module, nor by notebooks.
	if out, err := l.output(ctx, l.root, "go", "list", "-f", `{{if ne .Name "main"}}{{.ImportPath}}{{end}}`, "./..."); err != nil {
		l.say("  go list ./... failed (%s); warming only the third-party packages", l.logPath)
	} else {
		for _, p := range strings.Fields(out) {
			if !strings.Contains(p+"/", "/internal/") {
				pkgs[p] = true
			}
		}
	}
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	dir := filepath.Join(l.venv, "share", "gonb-warm")
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var src strings.Builder
	src.WriteString("package main\n\nimport (\n")
	for _, p := range names {
		fmt.Fprintf(&src, "\t_ %q\n", p)
	}
	src.WriteString(")\n\nfunc main() {}\n")
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src.String()), 0o644); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"mod", "init", "gonb_warm"},
		{"mod", "edit", "-require", mod + "@v0.0.0-00010101000000-000000000000", "-replace", mod + "=" + filepath.Join(l.root, "notebooks", "..")},
		{"get"},
	} {
		if err := l.run(ctx, "preparing the warm-up module", dir, "go", args...); err != nil {
			return err
		}
	}
	// The kernel's flags: -gcflags is part of every package's action ID.
	goflags, err := l.kernelGoflags(ctx)
	if err != nil {
		return err
	}
	build := append(append([]string{"build"}, strings.Fields(goflags)...), "-o", filepath.Join(dir, "warm"))
	if err := l.run(ctx, "compiling what the notebooks import", dir, "go", build...); err != nil {
		return err
	}
	os.Remove(filepath.Join(dir, "warm"))
	// GoNB's goimports lists every module of the kernel's workspace before
	// each cell: their metadata must be in the module cache too, or an
	// offline kernel asks the proxy every cell.
	if err := l.run(ctx, "listing the modules", l.root, "go", "list", "-m", "-json", "all"); err != nil {
		l.say("  WARNING: go list -m all failed; offline, each cell will wait for the module proxy")
	}
	l.say("  Go build cache warm for %d packages", len(names))
	return nil
}

// isExec reports whether p is a regular file with an execute bit.
func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

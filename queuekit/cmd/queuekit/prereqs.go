package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// The workshop's three prerequisites: Go, Python 3.11+ (with venv) and a
// JDK 17+ (java runs DynamoDB Local and ElasticMQ; javac builds DynamoDB
// Local's loopback launcher). Each missing one is one line saying how to
// install it on macOS (Homebrew), Debian/Ubuntu (apt) and Windows, where the
// workshop runs inside WSL2's Ubuntu. Node and Maven are not needed: the
// servers' jars and the ECharts asset are downloaded over HTTPS, pinned.

// prereq is one prerequisite and how to install it.
type prereq struct {
	name, macOS, apt string
}

var (
	prereqGo = prereq{"Go 1.26+", "brew install go",
		"sudo apt install golang-go only if it is 1.26+, else the tarball from https://go.dev/dl/"}
	prereqPython = prereq{"Python 3.11+ with venv", "brew install python@3.12",
		"sudo apt install python3 python3-venv"}
	prereqJava = prereq{"a JDK 17+ (java and javac)", "brew install openjdk@17 (then the symlink brew prints)",
		"sudo apt install openjdk-17-jdk-headless"}
)

// line is the one line that says how to install p.
func (p prereq) line(found string) string {
	return fmt.Sprintf("needs %s (%s): macOS: %s; Debian/Ubuntu: %s; Windows: the workshop runs in WSL2 (wsl --install -d Ubuntu), then the Debian/Ubuntu command inside it",
		p.name, found, p.macOS, p.apt)
}

// pythonExe is the interpreter the venv is made with: $PYTHON, else python3.
func pythonExe() string {
	if p := os.Getenv("PYTHON"); p != "" {
		return p
	}
	return "python3"
}

// checkPrereqs prints one line per missing prerequisite and fails when any
// is missing; needJava is false for the steps that run no server (setup).
func (l *launcher) checkPrereqs(ctx context.Context, needJava bool) error {
	var missing int
	miss := func(p prereq, found string) {
		missing++
		l.say("%s", p.line(found))
	}
	if v, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output(); err != nil {
		miss(prereqGo, "go is not on PATH")
	} else if !versionAtLeast(strings.TrimPrefix(strings.TrimSpace(string(v)), "go"), 1, 26) {
		miss(prereqGo, "found "+strings.TrimSpace(string(v)))
	}
	py := pythonExe()
	if v, err := exec.CommandContext(ctx, py, "-c", "import sys, venv; print('%d.%d' % sys.version_info[:2])").Output(); err != nil {
		if _, lerr := exec.LookPath(py); lerr != nil {
			miss(prereqPython, py+" is not on PATH; or set PYTHON=/path/to/python3.11")
		} else {
			miss(prereqPython, py+" has no venv module")
		}
	} else if !versionAtLeast(strings.TrimSpace(string(v)), 3, 11) {
		miss(prereqPython, py+" is "+strings.TrimSpace(string(v))+"; or set PYTHON=/path/to/python3.11")
	}
	if needJava {
		if found, ok := javaOK(ctx); !ok {
			miss(prereqJava, found)
		}
	}
	if missing > 0 {
		return usagef("%d prerequisite(s) missing (above); install them and rerun", missing)
	}
	return nil
}

var javaVersion = regexp.MustCompile(`version "([0-9._]+)`)

// javaOK checks java and javac, 17 or newer.
func javaOK(ctx context.Context) (string, bool) {
	for _, tool := range []string{"java", "javac"} {
		if _, err := exec.LookPath(tool); err != nil {
			return tool + " is not on PATH", false
		}
	}
	out, err := exec.CommandContext(ctx, "java", "-version").CombinedOutput()
	if err != nil {
		return "java -version failed", false
	}
	m := javaVersion.FindSubmatch(out)
	if m == nil {
		return "java -version printed no version", false
	}
	v := string(m[1])
	major, _ := strconv.Atoi(strings.Split(v, ".")[0])
	if major == 1 { // 1.8.0_x is Java 8
		major, _ = strconv.Atoi(strings.Split(v, ".")[1])
	}
	if major < 17 {
		return "found Java " + v, false
	}
	return "", true
}

// versionAtLeast reports whether "X.Y[.Z...]" is at least major.minor.
func versionAtLeast(v string, major, minor int) bool {
	f := strings.FieldsFunc(v, func(r rune) bool { return r == '.' || r == '-' || r == ' ' || r == 'r' || r == 'c' })
	if len(f) < 2 {
		return false
	}
	a, err1 := strconv.Atoi(f[0])
	b, err2 := strconv.Atoi(f[1])
	if errors.Join(err1, err2) != nil {
		return false
	}
	return a > major || a == major && b >= minor
}

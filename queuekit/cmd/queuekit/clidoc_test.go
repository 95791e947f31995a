package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// updateCLIDoc rewrites docs/cli.md from the commands' own help:
// make cli-doc, or go generate ./queuekit/cmd/queuekit.
var updateCLIDoc = flag.Bool("update-cli-doc", false, "rewrite docs/cli.md from the commands' help")

const cliDocPath = "../../../docs/cli.md"

// cliDoc builds the command and collects `queuekit help`, `queuekit <cmd> -h`
// for every command of the table and the fleet's subcommands, exactly as a
// person would see them.
func cliDoc(t *testing.T) []byte {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "queuekit")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	help := func(args ...string) string {
		cmd := exec.Command(bin, args...)
		// Defaults must not depend on the machine that generates the page.
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("queuekit %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimRight(string(out), "\n")
	}
	var b bytes.Buffer
	b.WriteString("<!-- Generated from the commands' own help by `make cli-doc` (go test ./queuekit/cmd/queuekit -run TestCLIDoc -update-cli-doc).\n")
	b.WriteString("     Do not edit: TestCLIDocMatchesTheHelp fails when this page and the help differ. -->\n\n")
	b.WriteString("# The queuekit command\n\n")
	b.WriteString("Every command's help, as `queuekit help` and `queuekit <command> -h` print it.\n")
	b.WriteString("How to build the command, examples and exit statuses: [cli-guide.md](cli-guide.md).\n\n")
	b.WriteString("```\n$ queuekit help\n" + help("help") + "\n```\n")
	sections := [][]string{}
	for _, c := range commands {
		sections = append(sections, []string{c.name})
		if c.name == "fleet" {
			for _, sub := range []string{"submit", "list", "view", "cost", "dispatcher", "executor"} {
				sections = append(sections, []string{"fleet", sub})
			}
		}
	}
	for _, s := range sections {
		name := strings.Join(s, " ")
		fmt.Fprintf(&b, "\n## queuekit %s\n\n", name)
		for _, c := range commands {
			if len(s) == 1 && c.name == s[0] {
				fmt.Fprintf(&b, "%s.\n\n", strings.ToUpper(c.summary[:1])+c.summary[1:])
			}
		}
		fmt.Fprintf(&b, "```\n$ queuekit %s -h\n%s\n```\n", name, help(append(s, "-h")...))
	}
	return b.Bytes()
}

// docs/cli.md is what the commands' help says today: a flag added, renamed
// or re-described without `make cli-doc` fails here.
func TestCLIDocMatchesTheHelp(t *testing.T) {
	got := cliDoc(t)
	if *updateCLIDoc {
		if err := os.WriteFile(cliDocPath, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(cliDocPath)
	if err != nil {
		t.Fatalf("%v: run make cli-doc", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("docs/cli.md differs from the commands' help at line %d:\n  help: %s\n  page: %s\nrun make cli-doc", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("docs/cli.md has %d lines, the help %d: run make cli-doc", len(wl), len(gl))
	}
}

// queuekit version and --version print the version the CHANGELOG's top entry names.
func TestVersionCommandPrintsQueuekitVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := runCLI(t, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("queuekit %s: exit %d, stderr %q", args[0], code, errOut)
		}
		if want := "queuekit " + queuekit.Version + "\n"; out != want {
			t.Errorf("queuekit %s printed %q, want %q (the CHANGELOG's top entry; queuekit's own test checks the two agree)", args[0], out, want)
		}
	}
}

package main

import (
	"strings"
	"testing"
)

// A malformed QUEUEKIT_NAME_PREFIX is bad input: one line naming the
// variable and the value, exit 2, before any server is contacted (the
// endpoints given answer nothing), for the DynamoDB and the SQS commands.
func TestBadNamePrefixExitsTwo(t *testing.T) {
	for _, c := range []struct {
		prefix string
		args   []string
	}{
		{"bad prefix!", []string{"seed", "--endpoint", "http://127.0.0.1:1"}},
		{"jupyter.alice_", []string{"fanout", "--slices", "2", "--endpoint", "http://127.0.0.1:1", "--sqs-endpoint", "http://127.0.0.1:1"}},
		{strings.Repeat("p", 41), []string{"seed", "--endpoint", "http://127.0.0.1:1"}},
	} {
		t.Setenv("QUEUEKIT_NAME_PREFIX", c.prefix)
		out, errOut, code := runCLI(t, c.args...)
		if code != 2 || out != "" || strings.Count(errOut, "\n") != 1 ||
			!strings.Contains(errOut, `QUEUEKIT_NAME_PREFIX="`+c.prefix+`"`) {
			t.Errorf("%s with prefix %q: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the variable and value", c.args[0], c.prefix, code, out, errOut)
		}
	}
}

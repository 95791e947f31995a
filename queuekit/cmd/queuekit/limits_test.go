package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// Bad configuration exits 2 with one line; nothing at --target exits 1
// with the project's unreachable line.
func TestLimitsBadConfigAndUnreachable(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--listen", "127.0.0.1:0", "--target", "http://127.0.0.1:1", "--scale", "0"}, 2, "queuekit limits: --scale 0: must be a number > 0"},
		{[]string{"--listen", "127.0.0.1:0", "--target", "http://127.0.0.1:1", "--scale", "-3"}, 2, "queuekit limits: --scale -3:"},
		{[]string{"--listen", "127.0.0.1:0", "--target", "ftp:/x"}, 2, `queuekit limits: --target "ftp:/x": must be a URL`},
		{[]string{"--listen", "nowhere", "--target", "http://127.0.0.1:1"}, 2, `queuekit limits: --listen "nowhere": want HOST:PORT`},
		{[]string{"--listen", "127.0.0.1:0", "--target", "http://127.0.0.1:1"}, 1, "queuekit limits: DynamoDB Local at http://127.0.0.1:1 is unreachable (connection refused): start DynamoDB Local with"},
	} {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"limits"}, c.args...), &out, &errb)
		if code != c.code || !strings.HasPrefix(errb.String(), c.want) || strings.Count(errb.String(), "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line starting %q", c.args, code, errb.String(), c.code, c.want)
		}
	}
}

// A good configuration prints its one line once it answers and serves
// until the signal (here the context the signal would cancel), then exits 0.
func TestLimitsServesUntilStopped(t *testing.T) {
	ep := ddbtest.Endpoint(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"limits", "--listen", addr, "--target", ep, "--scale", "20"}, &out, &errb)
	}()
	want := "limits: listening on http://" + addr + " (DynamoDB Local at " + ep + ", limits divided by 20)\n"
	for errb.String() == "" {
		select {
		case code := <-done:
			t.Fatalf("exited %d: %s", code, errb.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if errb.String() != want {
		t.Fatalf("stderr %q, want %q", errb.String(), want)
	}
	if c, err := net.Dial("tcp", addr); err != nil {
		t.Fatalf("nothing answers at %s after the line: %v", addr, err)
	} else {
		c.Close()
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d after the stop, stderr %q", code, errb.String())
	}
}

package fetch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Holders of one lock file never overlap, and each release lets the next
// one in.
func TestLockExcludesOtherHolders(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".installing")
	var holders, most atomic.Int32
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			release, err := Lock(context.Background(), path, Options{})
			if err != nil {
				t.Error(err)
				return
			}
			n := holders.Add(1)
			if n > most.Load() {
				most.Store(n)
			}
			time.Sleep(50 * time.Millisecond)
			holders.Add(-1)
			release()
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders at once, want 1", most.Load())
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the lock file is still there after the last release: %v", err)
	}
}

// A waiter says once whose the lock is, and gives up when its context ends,
// naming the lock file.
func TestLockWaitsForALiveHolderUntilTheContextEnds(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".installing")
	release, err := Lock(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var log syncBuffer
	_, err = Lock(ctx, path, Options{Log: &log, Prefix: "x"})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err %v: want one naming %s", err, path)
	}
	if got := log.String(); strings.Count(got, "\n") != 1 || !strings.Contains(got, "x: waiting for another install (pid ") {
		t.Errorf("log %q: want one line naming the holder", got)
	}
}

// A lock file untouched for longer than lockStale (its process died) is
// taken over at once; a holder keeps its own fresh while it holds it.
func TestLockTakesOverAStaleLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".installing")
	if err := os.WriteFile(path, []byte("pid 1 on gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var log syncBuffer
	release, err := Lock(ctx, path, Options{Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if !strings.Contains(log.String(), "taking over") {
		t.Errorf("log %q: want a line saying the stale lock was taken over", log.String())
	}
	b, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(b), "pid ") || strings.Contains(string(b), "gone") {
		t.Errorf("lock file says %q: want this process's pid", b)
	}
}

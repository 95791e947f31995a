package fetch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// Lock timings: the holder touches its lock file every lockBeat; a lock
// file untouched for lockStale belongs to a process that died (killed, or
// its machine slept through many beats) and is taken over.
const (
	lockBeat  = 2 * time.Second
	lockStale = 30 * time.Second
	lockPoll  = 200 * time.Millisecond
)

// Lock takes the lock file at path, created with O_EXCL (no flock, so it
// works the same on every system and file system), and returns the function
// that releases it. While another live process holds it, Lock waits (one
// line to opts.Log says whose it is) until it is released or ctx ends; a
// lock file untouched for 30 s is stale and taken over.
//
// The lock only spares a second download of the same files: what it guards
// stays correct without it, because every file is verified and renamed into
// place and an install becomes visible by one rename.
func Lock(ctx context.Context, path string, opts Options) (release func(), err error) {
	opts = opts.withDefaults()
	said := false
	for {
		fh, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			host, _ := os.Hostname()
			_, werr := fmt.Fprintf(fh, "pid %d on %s since %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
			if cerr := fh.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				_ = os.Remove(path)
				return nil, fmt.Errorf("write the lock file %s: %w", path, werr)
			}
			return beat(path), nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create the lock file %s: %w; check that the directory is writable", path, err)
		}
		st, serr := os.Stat(path)
		switch {
		case errors.Is(serr, fs.ErrNotExist):
			continue // released meanwhile
		case serr != nil:
			return nil, fmt.Errorf("read the lock file %s: %w", path, serr)
		case time.Since(st.ModTime()) > lockStale:
			// Stat again right before removing, so a holder that just took
			// it over (a fresh mtime) is left alone.
			if st2, err := os.Stat(path); err == nil && st2.ModTime().Equal(st.ModTime()) {
				opts.say("taking over %s, untouched for %v (its process is gone)", path, time.Since(st.ModTime()).Round(time.Second))
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, fmt.Errorf("remove the stale lock file %s: %w", path, err)
				}
			}
			continue
		}
		if !said {
			who, _ := os.ReadFile(path)
			opts.say("waiting for another install (%s, lock %s)", strings.TrimSpace(string(who)), path)
			said = true
		}
		if err := wait.Sleep(ctx, lockPoll); err != nil {
			return nil, fmt.Errorf("waiting for the lock %s: %w", path, context.Cause(ctx))
		}
	}
}

// beat keeps path's mtime fresh until the returned release is called, which
// removes it.
func beat(path string) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lockBeat)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				now := time.Now()
				_ = os.Chtimes(path, now, now)
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		_ = os.Remove(path)
	}
}

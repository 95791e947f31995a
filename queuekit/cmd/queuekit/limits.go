package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/nightqueue/workshop/queuekit/limits"
)

// runLimits serves the limits layer: `queuekit limits --listen HOST:PORT
// --target URL [--scale S] [--json-stats PATH]`. It checks its flags (exit
// 2), checks that DynamoDB Local answers at --target (exit 1 with the
// project's one-line unreachable error), prints one line on stderr once it
// answers, and serves until SIGTERM or SIGINT, when it writes the counters
// to --json-stats (also once a second while serving) and exits 0.
func runLimits(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags("limits")
	listen := fs.String("listen", "", "HOST:PORT to serve on, e.g. 127.0.0.1:8400 (loopback)")
	target := fs.String("target", "", "DynamoDB Local's endpoint, e.g. http://127.0.0.1:8000")
	scale := fs.Float64("scale", 1, "S: every limit is divided by S (> 0)")
	stats := fs.String("json-stats", "", "write the per-second counters (JSON) to this file, every second and at exit")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := checkLimitsFlags(fs, *listen, *target, *scale); err != nil {
		return err
	}
	s, err := limits.Start(context.WithoutCancel(ctx), *target, *listen, limits.WithScale(*scale))
	var ce *limits.ConfigError
	if errors.As(err, &ce) {
		return usagef("--%s", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "limits: listening on %s (DynamoDB Local at %s, limits divided by %s)\n", s.URL, *target, strconv.FormatFloat(*scale, 'f', -1, 64))
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			cerr := s.Close()
			if *stats != "" {
				if err := s.WriteStats(*stats); err != nil {
					return fmt.Errorf("--json-stats %s: %w", *stats, err)
				}
			}
			return cerr
		case <-tick.C:
			if *stats != "" {
				if err := s.WriteStats(*stats); err != nil {
					return fmt.Errorf("--json-stats %s: %w", *stats, err)
				}
			}
		}
	}
}

// checkLimitsFlags checks the flags before anything is contacted.
func checkLimitsFlags(fs *flag.FlagSet, listen, target string, scale float64) error {
	if listen == "" || target == "" {
		return usagef("--listen HOST:PORT and --target URL are required, e.g. queuekit limits --listen 127.0.0.1:8400 --target http://127.0.0.1:8000")
	}
	if _, port, err := net.SplitHostPort(listen); err != nil || port == "" {
		return usagef("--listen %q: want HOST:PORT, e.g. 127.0.0.1:8400", listen)
	}
	if !(scale > 0) || scale > 1e9 {
		return usagef("--scale %v: must be a number > 0 (limits are divided by it), e.g. --scale 20", scale)
	}
	_ = fs
	return nil
}

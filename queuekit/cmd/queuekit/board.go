package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/nightqueue/workshop/queuekit/board"
	"github.com/nightqueue/workshop/queuekit/chart"
)

// runBoard serves the room board as a JupyterHub managed service: `queuekit
// board --state DIR [--notebooks DIR] [--echarts FILE]`. The hub starts it
// with its service environment (JUPYTERHUB_SERVICE_URL to listen on,
// JUPYTERHUB_SERVICE_PREFIX, JUPYTERHUB_API_URL, the service's token and
// OAuth client); every report is appended to DIR/board.jsonl, read back at
// start. Runs until SIGTERM or SIGINT.
func runBoard(ctx context.Context, args []string, _, stderr io.Writer) error {
	fs := newFlags("board")
	state := fs.String("state", "", "directory for the board's history (board.jsonl), e.g. the room's ROOM_STATE")
	notebooks := fs.String("notebooks", "notebooks", "directory of the notebooks whose self-checks the board lists")
	echarts := fs.String("echarts", "notebooks/assets/echarts.min.js", "echarts.min.js, served to the board's page")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *state == "" {
		return usagef("--state DIR is required, e.g. queuekit board --state .room (the hub starts it: docs/room.md)")
	}
	svc := os.Getenv("JUPYTERHUB_SERVICE_URL")
	u, err := url.Parse(svc)
	if svc == "" || err != nil || u.Host == "" {
		return usagef("JUPYTERHUB_SERVICE_URL=%q: want the URL to listen on; queuekit board runs as a JupyterHub service (room/jupyterhub_config.py)", svc)
	}
	cat, err := board.ScanNotebooks(*notebooks)
	if err != nil {
		return badInput(fmt.Errorf("--notebooks: %w", err))
	}
	if len(cat) == 0 {
		return usagef("--notebooks %s: no *.ipynb there", *notebooks)
	}
	logger := log.New(stderr, "board: ", log.LstdFlags)
	if _, err := os.Stat(*echarts); err != nil {
		logger.Printf("--echarts %s: not found; the page shows its tables, and no chart until the file is there (make setup)", *echarts)
	}
	store, skipped, err := board.Open(filepath.Join(*state, "board.jsonl"))
	if err != nil {
		return err
	}
	defer store.Close()
	if skipped > 0 {
		logger.Printf("skipped a last line cut short in %s", filepath.Join(*state, "board.jsonl"))
	}
	var o board.Options
	board.FromEnv(&o)
	if os.Getenv(chart.AssetURLEnv) == "" {
		_ = os.Setenv(chart.AssetURLEnv, o.Prefix+"assets/echarts.min.js")
	}
	svcToken := os.Getenv("JUPYTERHUB_API_TOKEN")
	srv, err := board.NewServer(store, func(opt *board.Options) {
		*opt = o
		opt.Catalog, opt.EChartsFile, opt.Log, opt.Refresh, opt.Now = cat, *echarts, logger, 10, time.Now
		opt.Names = func(ctx context.Context) ([]string, error) { return o.Hub.Participants(ctx, svcToken) }
	})
	if err != nil {
		return usagef("%w", err)
	}
	ln, err := net.Listen("tcp", u.Host)
	if err != nil {
		return fmt.Errorf("board: listen on %s: %w", u.Host, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	logger.Printf("serving %s on %s (%d reports in %s)", o.Prefix, u.Host, len(store.Events()), *state)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("board: %w", err)
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("board: %w", err)
		}
		return nil
	}
}

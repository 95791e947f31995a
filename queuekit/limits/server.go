package limits

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
)

// Server is a layer serving on a loopback port.
type Server struct {
	*Layer
	// URL is the layer's endpoint, e.g. http://127.0.0.1:41234: give it to a
	// client as its DynamoDB endpoint.
	URL    string
	Target string

	srv  *http.Server
	done chan error
}

// Start starts a layer in front of target on listen ("" means
// 127.0.0.1:0, a free port the kernel picks), after checking that
// something answers at target: when nothing does, the error is the
// project's *awsapi.UnreachableError ("DynamoDB Local at ... is unreachable
// (connection refused): start DynamoDB Local with ..."). The layer stops
// when ctx ends or Close is called.
func Start(ctx context.Context, target, listen string, opts ...Option) (*Server, error) {
	l, err := New(target, opts...)
	if err != nil {
		return nil, err
	}
	if err := Probe(ctx, target); err != nil {
		return nil, err
	}
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("limits: listen on %s: %w", listen, err)
	}
	s := &Server{Layer: l, URL: "http://" + ln.Addr().String(), Target: target, done: make(chan error, 1),
		srv: &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}}
	go func() { s.done <- s.srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = s.Close()
	}()
	return s, nil
}

// Close stops the layer (requests in flight finish first, for up to 5 s).
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Wait returns when the server has stopped.
func (s *Server) Wait() error {
	err := <-s.done
	s.done <- err
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Probe checks that something answers HTTP at target (DynamoDB Local
// answers a bare GET with 400); when nothing does it returns the project's
// one-line *awsapi.UnreachableError for DynamoDB Local.
func Probe(ctx context.Context, target string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return &ConfigError{"target", fmt.Sprintf("%q", target), "must be a URL such as http://127.0.0.1:8000"}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		reason := awsapi.UnreachableReason(err)
		if reason == "" {
			reason = strings.TrimSpace(lastPart(err.Error()))
		}
		return &awsapi.UnreachableError{Service: awsapi.DynamoDB, Endpoint: target, Reason: reason,
			Local: awsapi.IsLocalEndpoint(target), Err: err}
	}
	_ = resp.Body.Close()
	return nil
}

func lastPart(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 {
		return s[i+2:]
	}
	return s
}

// WriteStats writes the per-second counters so far, with S, to path as
// JSON (through a temporary file).
func (l *Layer) WriteStats(path string) error { return writeJSON(path, l.opts.Scale, l.Stats()) }

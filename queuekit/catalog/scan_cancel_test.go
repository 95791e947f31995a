package catalog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
)

// segmentFailer sits between the catalog and DynamoDB Local: the Scan of
// segment fail gets a DynamoDB error at once; the Scans of the other
// segments are held until the client gives up on them (the request's context
// ends) or, if it never does, until hold passes and they go through.
type segmentFailer struct {
	fail  int
	hold  time.Duration
	proxy *httputil.ReverseProxy

	mu        sync.Mutex
	held      int // other-segment Scans held
	abandoned int // of those, how many the client cancelled
	forwarded int // of those, how many were waited for and went through
}

func (f *segmentFailer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Scan") {
		f.proxy.ServeHTTP(w, r)
		return
	}
	var in struct{ Segment *int }
	_ = json.Unmarshal(body, &in)
	if in.Segment != nil && *in.Segment == f.fail {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"__type":"com.amazonaws.dynamodb.v20120810#ValidationException","message":"injected failure of one segment"}`))
		return
	}
	f.mu.Lock()
	f.held++
	f.mu.Unlock()
	select {
	case <-r.Context().Done():
		f.mu.Lock()
		f.abandoned++
		f.mu.Unlock()
		return
	case <-time.After(f.hold):
		f.mu.Lock()
		f.forwarded++
		f.mu.Unlock()
		f.proxy.ServeHTTP(w, r)
	}
}

// A parallel Scan whose segment 2 fails must cancel segments 1, 3 and 4:
// each of their requests is either abandoned by the client while the proxy
// holds it or never sent, none is waited for, and the error names the failed
// segment.
func TestFailedScanSegmentCancelsTheOthers(t *testing.T) {
	direct := ddbtest.Catalog(t)
	if _, err := direct.Seed(ctxT(t), sampleJobs(t)); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(ddbtest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	// hold is only a backstop so a broken cancellation ends the test; the
	// assertion is on what the client did, not on time.
	f := &segmentFailer{fail: 1, hold: 30 * time.Second, proxy: httputil.NewSingleHostReverseProxy(target)}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := catalog.New(ctxT(t), catalog.WithEndpoint(srv.URL), catalog.WithTable(direct.Table()))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.ScanNight(ctxT(t), "2026-05-13", "", 4)
	if err == nil || !strings.Contains(err.Error(), "segment 2 of 4") || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("err = %v, want the injected failure of segment 2 of 4", err)
	}
	var missing *catalog.TableMissingError
	if errors.As(err, &missing) {
		t.Fatalf("err = %v: a validation error must not read as a missing table", err)
	}
	// The handler records an abandoned request after the client has gone;
	// wait for the proxy to finish with every request it holds.
	srv.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.forwarded != 0 || f.abandoned != f.held || f.held > 3 {
		t.Errorf("other segments: %d Scans held, %d abandoned by the client, %d waited for; want every held one abandoned and none waited for (the failure must cancel them)",
			f.held, f.abandoned, f.forwarded)
	}
}

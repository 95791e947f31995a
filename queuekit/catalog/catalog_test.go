package catalog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/data"
	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// TestMain exports the tests' DynamoDB Local as the standard
// AWS_ENDPOINT_URL_DYNAMODB, so the Example functions (which have no
// *testing.T) reach it the way a notebook would. Without a server the unit
// tests still run; every integration test fails with the command to run
// (ddbtest.Endpoint), and the examples print the unreachable-endpoint error.
func TestMain(m *testing.M) {
	if ep, err := ddbtest.Find(); err == nil {
		os.Setenv(catalog.EnvEndpoint, ep)
	} else {
		fmt.Fprintf(os.Stderr, "catalog: no DynamoDB Local, integration tests will fail: %v\n", err)
	}
	os.Exit(m.Run())
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func sampleJobs(t *testing.T) []queuekit.Job {
	t.Helper()
	jobs, err := queuekit.SampleJobs()
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func count(t *testing.T, c *catalog.Catalog) int {
	t.Helper()
	n, err := c.CountItems(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCreateTableTwiceIsFine(t *testing.T) {
	c := ddbtest.Catalog(t)
	if err := c.CreateTable(ctxT(t)); err != nil {
		t.Fatalf("second create: %v", err)
	}
	ok, err := c.Exists(ctxT(t))
	if err != nil || !ok {
		t.Fatalf("exists = %v, %v after create", ok, err)
	}
	if err := c.DeleteTable(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteTable(ctxT(t)); err != nil {
		t.Fatalf("deleting a deleted table: %v", err)
	}
}

func TestSeedTwiceGivesTheSameCount(t *testing.T) {
	c := ddbtest.Catalog(t)
	jobs := sampleJobs(t)
	for round := 1; round <= 2; round++ {
		rep, err := c.Seed(ctxT(t), jobs)
		if err != nil {
			t.Fatalf("seed %d: %v", round, err)
		}
		if rep.Items != len(jobs) {
			t.Fatalf("seed %d wrote %d items, want %d", round, rep.Items, len(jobs))
		}
		if got := count(t, c); got != len(jobs) {
			t.Fatalf("after seed %d the table has %d items, want %d", round, got, len(jobs))
		}
	}
}

func TestSeedReportsProgressUpToTheTotal(t *testing.T) {
	c := ddbtest.Catalog(t, catalog.WithWriters(3))
	jobs, err := workload.Generate(workload.Config{Nights: 20, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	var mu sync.Mutex
	_, err = c.Seed(ctxT(t), jobs, catalog.WithProgress(func(p queuekit.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if p.Total != len(jobs) {
			t.Errorf("progress total %d, want %d", p.Total, len(jobs))
		}
		calls = append(calls, p.Done)
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := (len(jobs) + catalog.BatchSize - 1) / catalog.BatchSize
	if len(calls) != want || calls[len(calls)-1] != len(jobs) {
		t.Fatalf("progress calls %v: want %d calls ending at %d", calls, want, len(jobs))
	}
	for i := 1; i < len(calls); i++ {
		if calls[i] <= calls[i-1] {
			t.Fatalf("progress went back: %v", calls)
		}
	}
}

func TestSeedValidatesEveryJobBeforeTheFirstWrite(t *testing.T) {
	c := ddbtest.Catalog(t)
	jobs := sampleJobs(t)
	jobs[len(jobs)-1].WorkloadClass = "cleanup"
	_, err := c.Seed(ctxT(t), jobs)
	var fe *queuekit.FieldError
	if !errors.As(err, &fe) || fe.Field != queuekit.AttrWorkloadClass {
		t.Fatalf("err = %v, want a FieldError on workload_class", err)
	}
	if !strings.Contains(err.Error(), "nothing written") {
		t.Errorf("error %q does not say nothing was written", err)
	}
	if n := count(t, c); n != 0 {
		t.Fatalf("%d items written despite an invalid job", n)
	}
}

func TestSeedRefusesDuplicateJobIDs(t *testing.T) {
	c := ddbtest.Catalog(t)
	jobs := sampleJobs(t)
	// The same job twice, and the same job_id in another window (a different
	// sort key, which a Query of the night would later refuse).
	moved := jobs[3]
	moved.RequestedWindow = "03:00"
	moved.WindowJobID = queuekit.SortKey(moved.RequestedWindow, moved.JobID)
	for _, extra := range []queuekit.Job{jobs[3], moved} {
		if _, err := c.Seed(ctxT(t), append(append([]queuekit.Job(nil), jobs...), extra)); err == nil || !strings.Contains(err.Error(), "duplicate job_id") {
			t.Fatalf("err = %v, want duplicate job_id", err)
		}
	}
	if n := count(t, c); n != 0 {
		t.Fatalf("%d items written despite a duplicate", n)
	}
}

func TestSampleNightsRoundTripExactly(t *testing.T) {
	c := ddbtest.Catalog(t)
	// JSON Lines -> jobs, exactly as the loader reads the file.
	jobs, err := queuekit.ReadJobs(bytes.NewReader(data.SampleNights), data.SampleNightsFile, queuekit.DefaultWindow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Seed(ctxT(t), jobs); err != nil {
		t.Fatal(err)
	}
	want, err := queuekit.SampleNights()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range want {
		got, rep, err := c.QueryNight(ctxT(t), w.BatchDate, "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("night %s from DynamoDB:\n got %+v\nwant %+v", w.BatchDate, got, w)
		}
		if rep.Count != len(w.Jobs) || rep.ScannedCount != rep.Count || rep.Pages != 1 || rep.ConsumedRCU <= 0 {
			t.Errorf("night %s: report %+v, want %d items read in one page with capacity", w.BatchDate, rep, len(w.Jobs))
		}
	}
}

func TestWindowQueryReturnsOnlyThatWindow(t *testing.T) {
	c := ddbtest.Catalog(t)
	if _, err := c.Seed(ctxT(t), sampleJobs(t)); err != nil {
		t.Fatal(err)
	}
	night, err := queuekit.SampleNight("2026-05-14")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		window string
		want   int
	}{
		{"01:00", 5}, {"02:00", 4}, {"03:00", 3}, {"04:00", 0}, {"", 12},
	} {
		t.Run("window="+tc.window, func(t *testing.T) {
			got, rep, err := c.QueryNight(ctxT(t), "2026-05-14", tc.window)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Jobs) != tc.want || rep.Count != tc.want || rep.ScannedCount != tc.want {
				t.Fatalf("%d jobs (report %+v), want %d", len(got.Jobs), rep, tc.want)
			}
			if want := night.Only(tc.window).Jobs; tc.want > 0 && !reflect.DeepEqual(got.Jobs, want) {
				t.Fatalf("jobs %+v, want %+v", got.Jobs, want)
			}
			scanned, srep, err := c.ScanNight(ctxT(t), "2026-05-14", tc.window, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(scanned.Jobs, got.Jobs) {
				t.Fatalf("Scan returned other jobs than Query")
			}
			if srep.Count != tc.want || srep.ScannedCount != 39 {
				t.Fatalf("scan report %+v: want %d returned of all 39 items scanned", srep, tc.want)
			}
		})
	}
}

// A unit test: the endpoint (port 9, closed) is never contacted, so an
// "unreachable" error instead of the argument's would fail it.
func TestBadArgumentsAreRefusedBeforeAnyCall(t *testing.T) {
	c, err := catalog.New(context.Background(), catalog.WithEndpoint("http://localhost:9"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ date, window, want string }{
		{"2026-5-13", "", "YYYY-MM-DD"},
		{"2026-05-13", "2:00", "HH:MM"},
	} {
		if _, _, err := c.QueryNight(ctxT(t), tc.date, tc.window); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("QueryNight(%q, %q): err = %v, want %q", tc.date, tc.window, err, tc.want)
		}
		if _, _, err := c.ScanNight(ctxT(t), tc.date, tc.window, 2); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ScanNight(%q, %q): err = %v, want %q", tc.date, tc.window, err, tc.want)
		}
	}
}

// TestQueryReadsOneNightScanReadsTheTable measures, not asserts by fiat: one
// night's Query reads only that night whatever the table size, and Scan's
// capacity grows with the table.
func TestQueryReadsOneNightScanReadsTheTable(t *testing.T) {
	t.Parallel()
	c := ddbtest.Catalog(t, catalog.WithWriters(4))
	year1, err := workload.Generate(workload.Config{Start: "2024-05-11", Nights: 365, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	year2, err := workload.Generate(workload.Config{Start: "2025-05-11", Nights: 365, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	const night = "2024-11-05"
	measure := func(label string) (q, s, p catalog.AccessReport) {
		t.Helper()
		qn, q, err := c.QueryNight(ctxT(t), night, "")
		if err != nil {
			t.Fatal(err)
		}
		sn, s, err := c.ScanNight(ctxT(t), night, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		pn, p, err := c.ScanNight(ctxT(t), night, "", 4)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(qn, sn) || !reflect.DeepEqual(qn, pn) {
			t.Fatalf("%s: Query, Scan and parallel Scan disagree on the night's jobs", label)
		}
		t.Logf("%s: query %+v; scan %+v; parallel scan %+v", label, q, s, p)
		return q, s, p
	}
	if _, err := c.Seed(ctxT(t), year1); err != nil {
		t.Fatal(err)
	}
	q1, s1, p1 := measure("1 year")
	if _, err := c.Seed(ctxT(t), year2); err != nil {
		t.Fatal(err)
	}
	q2, s2, p2 := measure("2 years")

	if q1.ScannedCount != q1.Count || q2.ScannedCount != q2.Count || q1.Count == 0 {
		t.Errorf("Query read more than it returned: %+v, %+v", q1, q2)
	}
	if q1.ConsumedRCU != q2.ConsumedRCU || q1.Count != q2.Count {
		t.Errorf("Query of one night cost %.1f RCU at 1 year and %.1f at 2: it should not depend on the table size", q1.ConsumedRCU, q2.ConsumedRCU)
	}
	if s1.ScannedCount != len(year1) || s2.ScannedCount != len(year1)+len(year2) {
		t.Errorf("Scan read %d and %d items, want the whole table: %d and %d", s1.ScannedCount, s2.ScannedCount, len(year1), len(year1)+len(year2))
	}
	if s1.Count != q1.Count || s2.Count != q2.Count {
		t.Errorf("Scan returned %d/%d items, Query %d/%d", s1.Count, s2.Count, q1.Count, q2.Count)
	}
	if !(s2.ConsumedRCU > 1.8*s1.ConsumedRCU) {
		t.Errorf("Scan capacity %.1f RCU at 2 years, %.1f at 1 year: want more than 1.8 times", s2.ConsumedRCU, s1.ConsumedRCU)
	}
	if !(s1.ConsumedRCU > 10*q1.ConsumedRCU) {
		t.Errorf("Scan capacity %.1f RCU vs Query %.1f at 1 year: a year's Scan should cost far more than one night's Query", s1.ConsumedRCU, q1.ConsumedRCU)
	}
	if p1.ScannedCount != s1.ScannedCount || p2.ScannedCount != s2.ScannedCount || p1.Segments != 4 {
		t.Errorf("parallel Scan read %d/%d items, plain Scan %d/%d", p1.ScannedCount, p2.ScannedCount, s1.ScannedCount, s2.ScannedCount)
	}
}

func TestQueryFollowsPagesPast1MB(t *testing.T) {
	c := ddbtest.Catalog(t)
	jobs, err := workload.Generate(workload.Config{Start: "2026-07-01", Nights: 2, Seed: 11, HeavyNights: 2})
	if err != nil {
		t.Fatal(err)
	}
	// 16 to 24 jobs a heavy night, 200 KB each: 3 MB or more a night, so a
	// Query must take several 1 MB pages.
	if _, err := c.Seed(ctxT(t), jobs, catalog.WithPadding(200*1024)); err != nil {
		t.Fatal(err)
	}
	want := queuekit.GroupNights(jobs, queuekit.DefaultWindow)[0]
	got, rep, err := c.QueryNight(ctxT(t), want.BatchDate, "")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Pages < 3 {
		t.Errorf("%d pages for %d items of 200 KB, want at least 3", rep.Pages, rep.Count)
	}
	if !reflect.DeepEqual(got.Jobs, want.Jobs) {
		t.Errorf("paged Query returned %d jobs, want the night's %d in order", len(got.Jobs), len(want.Jobs))
	}
	// Capacity follows the item size: at least 200 KB / 4 KB / 2 per item
	// (eventually consistent reads cost half).
	if min := float64(len(want.Jobs)) * 200 / 4 / 2; rep.ConsumedRCU < min {
		t.Errorf("Query consumed %.1f RCU, want at least %.1f for %d items of 200 KB", rep.ConsumedRCU, min, len(want.Jobs))
	}
	_, srep, err := c.ScanNight(ctxT(t), want.BatchDate, "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if srep.Pages < 5 || srep.Count != len(want.Jobs) || srep.ScannedCount != len(jobs) {
		t.Errorf("scan report %+v: want more pages than Query, %d returned, %d scanned", srep, len(want.Jobs), len(jobs))
	}
}

// dropper is a reverse proxy in front of DynamoDB Local that forwards only
// part of each BatchWriteItem request and returns the rest as
// UnprocessedItems, as DynamoDB does under throttling.
type dropper struct {
	target  *url.URL
	proxy   *httputil.ReverseProxy
	keep    func(n int) int // how many of n items to forward
	mu      sync.Mutex
	dropped int
	batches int
}

func newDropper(t *testing.T, endpoint string, keep func(n int) int) (*dropper, *httptest.Server) {
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	d := &dropper{target: u, proxy: httputil.NewSingleHostReverseProxy(u), keep: keep}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return d, srv
}

type batchBody struct {
	RequestItems     map[string][]json.RawMessage `json:"RequestItems"`
	UnprocessedItems map[string][]json.RawMessage `json:"UnprocessedItems,omitempty"`
}

func (d *dropper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".BatchWriteItem") {
		d.proxy.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	var in batchBody
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	dropped := map[string][]json.RawMessage{}
	n := 0
	for table, reqs := range in.RequestItems {
		k := d.keep(len(reqs))
		dropped[table] = reqs[k:]
		in.RequestItems[table] = reqs[:k]
		n += len(reqs) - k
	}
	for table, reqs := range in.RequestItems {
		if len(reqs) == 0 { // DynamoDB refuses an empty list: keep the table out
			delete(in.RequestItems, table)
		}
	}
	if len(in.RequestItems) == 0 {
		d.reply(w, n, dropped)
		return
	}
	fwd, _ := json.Marshal(batchBody{RequestItems: in.RequestItems})
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, d.target.String()+"/", bytes.NewReader(fwd))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	req.Header = r.Header.Clone()
	req.ContentLength = int64(len(fwd))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(rb)
		return
	}
	var out batchBody
	if err := json.Unmarshal(rb, &out); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	for table, reqs := range out.UnprocessedItems {
		dropped[table] = append(dropped[table], reqs...)
	}
	d.reply(w, n, dropped)
}

// reply answers like DynamoDB with the dropped requests as UnprocessedItems.
func (d *dropper) reply(w http.ResponseWriter, n int, dropped map[string][]json.RawMessage) {
	unprocessed := map[string][]json.RawMessage{}
	for table, reqs := range dropped {
		if len(reqs) > 0 {
			unprocessed[table] = reqs
		}
	}
	d.mu.Lock()
	d.dropped += n
	d.batches++
	d.mu.Unlock()
	res, _ := json.Marshal(map[string]any{"UnprocessedItems": unprocessed})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(http.StatusOK)
	w.Write(res)
}

func TestUnprocessedItemsAreRetriedUntilAllAreWritten(t *testing.T) {
	direct := ddbtest.Catalog(t)
	// Forward two thirds of every batch (rounded down, at least one item):
	// a batch of 25 goes out as 16, then 6, then 2, 1 and 0 left.
	d, srv := newDropper(t, ddbtest.Endpoint(t), func(n int) int { return max(1, n*2/3) })
	c, err := catalog.New(context.Background(), catalog.WithEndpoint(srv.URL), catalog.WithTable(direct.Table()),
		catalog.WithRetry(10, time.Millisecond, 20*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := workload.Generate(workload.Config{Nights: 30, Seed: 21})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Seed(ctxT(t), jobs)
	if err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	dropped := d.dropped
	d.mu.Unlock()
	if dropped == 0 {
		t.Fatal("the proxy dropped nothing: the retry path was not exercised")
	}
	if rep.Items != len(jobs) || rep.Retried != dropped {
		t.Errorf("report %+v: want %d items written, %d retried", rep, len(jobs), dropped)
	}
	if got := count(t, direct); got != len(jobs) {
		t.Fatalf("table has %d items, want %d: items were lost or duplicated", got, len(jobs))
	}
	for _, want := range queuekit.GroupNights(jobs, queuekit.DefaultWindow) {
		got, _, err := direct.QueryNight(ctxT(t), want.BatchDate, "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Jobs, want.Jobs) {
			t.Fatalf("night %s differs after the retried seed", want.BatchDate)
		}
	}
	t.Logf("%d items, %d dropped and retried, %d requests", len(jobs), dropped, rep.Requests)
}

func TestExhaustedRetriesReportTheUnwrittenCount(t *testing.T) {
	direct := ddbtest.Catalog(t)
	// Always keep back one item: every batch ends with an item DynamoDB "never" takes.
	_, srv := newDropper(t, ddbtest.Endpoint(t), func(n int) int { return n - 1 })
	c, err := catalog.New(context.Background(), catalog.WithEndpoint(srv.URL), catalog.WithTable(direct.Table()),
		catalog.WithRetry(3, time.Millisecond, 5*time.Millisecond), catalog.WithWriters(1))
	if err != nil {
		t.Fatal(err)
	}
	jobs := sampleJobs(t)
	_, err = c.Seed(ctxT(t), jobs)
	var ue *catalog.UnwrittenError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an UnwrittenError", err)
	}
	written := count(t, direct)
	if ue.Unwritten != len(jobs)-written || ue.Unwritten == 0 || ue.Total != len(jobs) {
		t.Fatalf("error says %d of %d unwritten, table has %d of %d", ue.Unwritten, ue.Total, written, len(jobs))
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("%d of %d items left unwritten", ue.Unwritten, len(jobs))) || !strings.Contains(msg, "after 3 attempts") {
		t.Errorf("message %q does not give the count and the attempts", msg)
	}
}

func TestUnreachableEndpointIsOneClearLine(t *testing.T) {
	t.Parallel()
	// Port 9 (discard) is closed on the test machines: the connection is refused.
	c, err := catalog.New(context.Background(), catalog.WithEndpoint("http://127.0.0.1:9"), catalog.WithCallTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.QueryNight(ctxT(t), "2026-05-13", "")
	var ue *catalog.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("err = %v, want an UnreachableError", err)
	}
	msg := err.Error()
	for _, want := range []string{"http://127.0.0.1:9", "unreachable", "queuekit servers start dynamodb", "make dynamodb"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line: %q", msg)
	}
}

func TestMissingTableSaysHowToSeed(t *testing.T) {
	c := ddbtest.NewCatalog(t)
	_, _, err := c.QueryNight(ctxT(t), "2026-05-13", "")
	var me *catalog.TableMissingError
	if !errors.As(err, &me) {
		t.Fatalf("err = %v, want a TableMissingError", err)
	}
	if !strings.Contains(err.Error(), "go run ./queuekit/cmd/queuekit seed --sample") || !strings.Contains(err.Error(), c.Table()) {
		t.Errorf("message %q does not name the table and the seed command", err)
	}
}

// TestMalformedItemGivesTheLoaderError writes broken items straight into the
// table and checks that reading them fails with the very FieldError the JSON
// Lines loader gives for the same broken job, located at the item's key.
func TestMalformedItemGivesTheLoaderError(t *testing.T) {
	c := ddbtest.Catalog(t)
	good := sampleJobs(t)[0] // 2026-05-11, 01:00#JOB-20260511-001
	for _, tc := range []struct {
		name      string
		breakItem func(item map[string]types.AttributeValue, line map[string]any)
	}{
		{"missing attribute", func(item map[string]types.AttributeValue, line map[string]any) {
			delete(item, queuekit.AttrPriority)
			delete(line, queuekit.AttrPriority)
		}},
		{"two missing attributes", func(item map[string]types.AttributeValue, line map[string]any) {
			delete(item, queuekit.AttrStatus)
			item[queuekit.AttrRuntime] = &types.AttributeValueMemberNULL{Value: true}
			delete(line, queuekit.AttrStatus)
			line[queuekit.AttrRuntime] = nil
		}},
		{"wrong type", func(item map[string]types.AttributeValue, line map[string]any) {
			item[queuekit.AttrPriority] = &types.AttributeValueMemberS{Value: "high"}
			line[queuekit.AttrPriority] = "high"
		}},
		{"fractional number", func(item map[string]types.AttributeValue, line map[string]any) {
			item[queuekit.AttrRuntime] = &types.AttributeValueMemberN{Value: "2.5"}
			line[queuekit.AttrRuntime] = 2.5
		}},
		{"bool as string", func(item map[string]types.AttributeValue, line map[string]any) {
			item[queuekit.AttrExclusive] = &types.AttributeValueMemberS{Value: "yes"}
			line[queuekit.AttrExclusive] = "yes"
		}},
		{"unknown class", func(item map[string]types.AttributeValue, line map[string]any) {
			item[queuekit.AttrWorkloadClass] = &types.AttributeValueMemberS{Value: "cleanup"}
			line[queuekit.AttrWorkloadClass] = "cleanup"
		}},
		{"negative runtime", func(item map[string]types.AttributeValue, line map[string]any) {
			item[queuekit.AttrRuntime] = &types.AttributeValueMemberN{Value: "-5"}
			line[queuekit.AttrRuntime] = -5
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			item, err := catalog.MarshalJob(good)
			if err != nil {
				t.Fatal(err)
			}
			var line map[string]any
			raw, _ := json.Marshal(good)
			if err := json.Unmarshal(raw, &line); err != nil {
				t.Fatal(err)
			}
			tc.breakItem(item, line)
			if _, err := c.Client().PutItem(ctxT(t), &dynamodb.PutItemInput{TableName: aws.String(c.Table()), Item: item}); err != nil {
				t.Fatal(err)
			}
			raw, _ = json.Marshal(line)
			_, loadErr := queuekit.ReadJobs(bytes.NewReader(raw), "x.jsonl", queuekit.DefaultWindow)
			var want *queuekit.FieldError
			if !errors.As(loadErr, &want) {
				t.Fatalf("loader error %v is not a FieldError", loadErr)
			}
			want.Location = fmt.Sprintf("dynamodb table %s item batch_date=2026-05-11, window_job_id=01:00#JOB-20260511-001", c.Table())

			for _, read := range []func() error{
				func() error { _, _, err := c.QueryNight(ctxT(t), "2026-05-11", ""); return err },
				func() error { _, _, err := c.ScanNight(ctxT(t), "2026-05-11", "01:00", 2); return err },
			} {
				err := read()
				var got *queuekit.FieldError
				if !errors.As(err, &got) {
					t.Fatalf("err = %v, want a FieldError", err)
				}
				if got.Error() != want.Error() {
					t.Errorf("DynamoDB error\n %s\nloader error\n %s", got, want)
				}
			}
		})
	}
}

func TestIsLocalEndpoint(t *testing.T) {
	for _, tc := range []struct {
		endpoint string
		local    bool
	}{
		{"http://localhost:8000", true},
		{"http://127.0.0.1:8000", true},
		{"http://[::1]:8000", true},
		{"http://0.0.0.0:8000", true},
		{"http://dynamodb-local:8000", true},
		{"https://dynamodb.us-east-1.amazonaws.com", false},
		{"https://dynamodb.eu-west-1.amazonaws.com", false},
		{"http://10.0.0.5:8000", false},
		{"not a url", false},
	} {
		if got := catalog.IsLocalEndpoint(tc.endpoint); got != tc.local {
			t.Errorf("IsLocalEndpoint(%q) = %v, want %v", tc.endpoint, got, tc.local)
		}
	}
}

func TestAccessReportJSONHasTheDocumentedKeys(t *testing.T) {
	r := catalog.AccessReport{Method: "Query", Count: 10, ScannedCount: 10, ConsumedRCU: 0.5, Pages: 1, Elapsed: 3250 * time.Microsecond}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"count":10,"scanned_count":10,"consumed_rcu":0.5,"pages":1,"elapsed_ms":3.25}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

func TestBadOptionsAreRefused(t *testing.T) {
	for _, opts := range [][]catalog.Option{
		{catalog.WithTable("x")},
		{catalog.WithTable("bad name")},
		{catalog.WithWriters(0)},
		{catalog.WithEndpoint("localhost:8000")},
	} {
		if _, err := catalog.New(context.Background(), opts...); err == nil {
			t.Errorf("options %d: no error", len(opts))
		}
	}
}

// The poor key is just another catalog: created (twice is fine), seeded
// (twice leaves the same table), read by Scan only, and GetJob is one GetItem.
func TestJobIDKeyForcesAScanToReadANight(t *testing.T) {
	ctx := ctxT(t)
	cat := ddbtest.NewCatalog(t, catalog.WithKeySchema(catalog.KeyByJobID)) // deleted when the test ends
	for range 2 {
		if err := cat.CreateTable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	jobs := sampleJobs(t)
	for range 2 {
		if _, err := cat.Seed(ctx, jobs); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, cat); n != len(jobs) {
		t.Fatalf("table holds %d items after seeding twice, want %d", n, len(jobs))
	}
	want, err := queuekit.SampleNight("2026-05-13")
	if err != nil {
		t.Fatal(err)
	}
	got, rep, err := cat.ScanNight(ctx, "2026-05-13", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Jobs, want.Jobs) {
		t.Errorf("night read by Scan:\n%v\nwant\n%v", got.Jobs, want.Jobs)
	}
	if rep.Count != len(want.Jobs) || rep.ScannedCount != len(jobs) {
		t.Errorf("Scan returned %d and scanned %d; want %d returned and every one of the %d items scanned",
			rep.Count, rep.ScannedCount, len(want.Jobs), len(jobs))
	}
	win, _, err := cat.ScanNight(ctx, "2026-05-13", "02:00", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(win.Jobs) != 3 {
		t.Errorf("window 02:00 of 2026-05-13: %d jobs, want 3", len(win.Jobs))
	}
	if _, _, err := cat.QueryNight(ctx, "2026-05-13", ""); err == nil || !strings.Contains(err.Error(), "ScanNight") {
		t.Errorf("QueryNight on a job_id key: %v, want an error pointing to ScanNight", err)
	}
	j, err := cat.GetJob(ctx, "JOB-20260513-003")
	if err != nil {
		t.Fatal(err)
	}
	if j != want.Jobs[2] {
		t.Errorf("GetJob: %+v, want %+v", j, want.Jobs[2])
	}
	if _, err := cat.GetJob(ctx, "JOB-20260513-099"); !errors.Is(err, catalog.ErrNoSuchJob) {
		t.Errorf("GetJob of a missing job: %v, want ErrNoSuchJob", err)
	}
	// The same table opened with the night key is refused, not misread.
	other, err := catalog.New(ctx, catalog.WithEndpoint(cat.Endpoint()), catalog.WithTable(cat.Table()))
	if err != nil {
		t.Fatal(err)
	}
	if err := other.CreateTable(ctx); err == nil || !strings.Contains(err.Error(), "another key schema") {
		t.Errorf("night key on a job_id table: %v, want another key schema", err)
	}
}

// GetJob on the night key reads the job's night (the date in its id) with
// one Query; padding is reported per item.
func TestGetJobOnTheNightKey(t *testing.T) {
	ctx := ctxT(t)
	cat := ddbtest.Catalog(t)
	jobs := sampleJobs(t)
	if _, err := cat.Seed(ctx, jobs, catalog.WithPadding(100)); err != nil {
		t.Fatal(err)
	}
	j, err := cat.GetJob(ctx, jobs[5].JobID)
	if err != nil {
		t.Fatal(err)
	}
	if j != jobs[5] {
		t.Errorf("GetJob: %+v, want %+v", j, jobs[5])
	}
	if n, err := cat.PaddingBytes(ctx, jobs[5].JobID); err != nil || n != 100 {
		t.Errorf("PaddingBytes = %d, %v; want 100", n, err)
	}
	if _, err := cat.GetJob(ctx, "JOB-20260513-099"); !errors.Is(err, catalog.ErrNoSuchJob) {
		t.Errorf("missing job: %v, want ErrNoSuchJob", err)
	}
	if _, err := cat.GetJob(ctx, "job-7"); err == nil || !strings.Contains(err.Error(), "malformed job id") {
		t.Errorf("malformed id: %v", err)
	}
}

package board_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/board"
)

var t0 = time.Date(2026, 5, 14, 9, 0, 0, 0, time.UTC)

func ev(min int, user, nb, check string, ok bool) board.Event {
	return board.Event{Time: t0.Add(time.Duration(min) * time.Minute), User: user, Notebook: nb, Check: check, OK: ok}
}

func TestStoreKeepsHistoryAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b", "board.jsonl")
	s, skipped, err := board.Open(path)
	if err != nil || skipped != 0 {
		t.Fatalf("Open: %v, skipped %d", err, skipped)
	}
	want := []board.Event{ev(0, "alice", "01.ipynb", "a", false), ev(1, "alice", "01.ipynb", "a", true), ev(2, "bob", "03.ipynb", "c", false)}
	for _, e := range want {
		if err := s.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// a crash in the middle of a write leaves a cut-off last line
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"time":"2026-05-14T09:03:00Z","user":"car`)
	f.Close()
	s, skipped, err = board.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := s.Events()
	if skipped != 1 || len(got) != len(want) {
		t.Fatalf("reopened: %d events, %d skipped; want %d and 1", len(got), skipped, len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].User != want[i].User || got[i].Check != want[i].Check || got[i].OK != want[i].OK {
			t.Errorf("event %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("board.jsonl mode %v, want 0600", st.Mode().Perm())
	}
}

func TestOpenRefusesABadLineInTheMiddle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "board.jsonl")
	os.WriteFile(path, []byte("{\"user\":\"a\",\"check\":\"x\"}\nnot json\n{\"user\":\"b\",\"check\":\"y\"}\n"), 0o600)
	_, _, err := board.Open(path)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("Open = %v, want an error naming line 2", err)
	}
}

func TestStateShowsLatestResultAndNotRun(t *testing.T) {
	cat := board.Catalog{"01.ipynb": {"a", "b", "c"}, "03.ipynb": {"x"}}
	events := []board.Event{
		ev(0, "alice", "01.ipynb", "a", false),
		ev(1, "alice", "01.ipynb", "a", true), // fixed: the latest counts
		ev(2, "alice", "01.ipynb", "b", false),
		ev(3, "bob", "03.ipynb", "x", true),
		ev(4, "bob", "03.ipynb", "extra", false), // not in the catalog: listed after it
	}
	got := board.State(events, cat, []string{"carol", "bob"})
	if len(got) != 3 || got[0].Name != "alice" || got[1].Name != "bob" || got[2].Name != "carol" {
		t.Fatalf("rows %+v, want alice, bob, carol", got)
	}
	a := got[0]
	want := []board.CheckState{{Notebook: "01.ipynb", Check: "a", Status: board.Pass}, {Notebook: "01.ipynb", Check: "b", Status: board.Fail},
		{Notebook: "01.ipynb", Check: "c", Status: board.NotRun}}
	if a.Notebook != "01.ipynb" || a.Passed != 1 || a.Failed != 1 || a.NotRun != 1 || len(a.Checks) != 3 {
		t.Fatalf("alice = %+v", a)
	}
	for i, w := range want {
		if a.Checks[i].Check != w.Check || a.Checks[i].Status != w.Status {
			t.Errorf("alice check %d = %+v, want %+v", i, a.Checks[i], w)
		}
	}
	b := got[1]
	if b.Passed != 1 || b.Failed != 1 || b.NotRun != 0 || b.Checks[1].Check != "extra" {
		t.Errorf("bob = %+v", b)
	}
	if c := got[2]; c.Notebook != "" || len(c.Checks) != 0 || !c.LastSeen.IsZero() {
		t.Errorf("carol, who never reported = %+v", c)
	}
}

func TestHistoryCountsLatestResults(t *testing.T) {
	events := []board.Event{
		ev(0, "alice", "01", "a", false),
		ev(1, "alice", "01", "a", true),
		ev(2, "bob", "01", "a", true),
		ev(3, "bob", "01", "b", false),
	}
	h := board.History(events, 0)
	want := [][3]int{{0, 1, 1}, {1, 0, 1}, {2, 0, 2}, {2, 1, 2}}
	if len(h) != len(want) {
		t.Fatalf("%d points, want %d", len(h), len(want))
	}
	for i, w := range want {
		if h[i].Passed != w[0] || h[i].Failed != w[1] || h[i].Participants != w[2] {
			t.Errorf("point %d = %+v, want passed/failed/participants %v", i, h[i], w)
		}
	}
	// thinning keeps at most max points and the last one
	var many []board.Event
	for i := range 1000 {
		many = append(many, ev(i, "alice", "01", "c"+string(rune('a'+i%20)), i%3 != 0))
	}
	th := board.History(many, 50)
	full := board.History(many, 0)
	if len(th) > 50 || th[len(th)-1] != full[len(full)-1] {
		t.Errorf("thinned to %d points ending %+v, want ≤ 50 ending %+v", len(th), th[len(th)-1], full[len(full)-1])
	}
}

// The catalog of the workshop's own notebooks: every literal-named check of
// each notebook, as many as a plain count of `lab.Check…("` calls finds.
func TestScanNotebooksFindsEveryLiteralCheck(t *testing.T) {
	dir := filepath.Join("..", "..", "notebooks")
	cat, err := board.ScanNotebooks(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.ipynb"))
	if len(files) == 0 || len(cat) != len(files) {
		t.Fatalf("catalog of %d notebooks, %d files", len(cat), len(files))
	}
	call := regexp.MustCompile(`lab\.Check[A-Za-z]*\(\\"`)
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		n := len(call.FindAll(raw, -1)) + strings.Count(string(raw), "ttllab.CheckTTLChoice(")
		names := cat[filepath.Base(f)]
		if len(names) > n || (n > 0 && len(names) == 0) {
			t.Errorf("%s: %d checks listed, %d calls in the file", filepath.Base(f), len(names), n)
		}
	}
	if got := cat["03-queueing-parameters.ipynb"]; len(got) != 3 || got[1] != "smallest c with ρ < 0.5" {
		t.Errorf("03's checks = %q", got)
	}
	if got := cat["06-timers-ttl-streams.ipynb"]; len(got) != 5 || got[0] != "every job has one of the four mechanisms" {
		t.Errorf("06's checks = %q", got)
	}
}

// hubStandIn answers GET /hub/api/user as JupyterHub does for the tokens it
// knows (the room test in tests/room runs the real hub).
func hubStandIn(t *testing.T, tokens map[string]board.Identity) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hub/api/user" {
			http.NotFound(w, r)
			return
		}
		id, ok := tokens[strings.TrimPrefix(r.Header.Get("Authorization"), "token ")]
		if !ok {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(id)
	}))
	t.Cleanup(s.Close)
	return s
}

func newBoard(t *testing.T) (*httptest.Server, *board.Store) {
	t.Helper()
	hub := hubStandIn(t, map[string]board.Identity{
		"tok-alice": {Name: "alice", Kind: "user"}, "tok-bob": {Name: "bob", Kind: "user"},
		"tok-inst": {Name: "instructor", Kind: "user", Admin: true}, "tok-svc": {Name: "culler", Kind: "service"},
	})
	store, _, err := board.Open(filepath.Join(t.TempDir(), "board.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	srv, err := board.NewServer(store, func(o *board.Options) {
		o.Prefix = "/services/board/"
		o.Hub = &board.Hub{APIURL: hub.URL + "/hub/api"}
		o.Catalog = board.Catalog{"01.ipynb": {"a", "b"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	b := httptest.NewServer(srv)
	t.Cleanup(b.Close)
	return b, store
}

func post(t *testing.T, url, token, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/services/board/api/progress", strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestProgressIsRecordedUnderTheTokensOwnerOnly(t *testing.T) {
	b, store := newBoard(t)
	cases := []struct {
		token, body string
		want        int
	}{
		{"tok-alice", `{"notebook":"01.ipynb","check":"a","ok":true}`, 204},
		{"tok-alice", `{"notebook":"01.ipynb","check":"b","ok":false,"user":"alice"}`, 204},
		{"tok-alice", `{"notebook":"01.ipynb","check":"a","ok":true,"user":"bob"}`, 403}, // as someone else
		{"", `{"notebook":"01.ipynb","check":"a","ok":true,"user":"bob"}`, 401},          // no token
		{"tok-forged", `{"notebook":"01.ipynb","check":"a","ok":true}`, 403},             // the hub does not know it
		{"tok-svc", `{"notebook":"01.ipynb","check":"a","ok":true}`, 403},                // a service is no participant
		{"tok-bob", `{"notebook":"01.ipynb","check":"","ok":true}`, 400},
		{"tok-bob", `{"notebook":"01.ipynb","check":"a","ok":true,"name":"alice"}`, 400}, // unknown field
		{"tok-bob", `{"check":"` + strings.Repeat("x", board.MaxReportLen) + `"}`, 400},
	}
	for i, c := range cases {
		if got := post(t, b.URL, c.token, c.body); got != c.want {
			t.Errorf("case %d: HTTP %d, want %d", i, got, c.want)
		}
	}
	evs := store.Events()
	if len(evs) != 2 || evs[0].User != "alice" || evs[1].User != "alice" || !evs[0].OK || evs[1].OK {
		t.Fatalf("recorded %+v, want alice's two reports only", evs)
	}
}

func get(t *testing.T, url, token string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "token "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp, b.String()
}

func TestBoardIsForTheInstructorOnly(t *testing.T) {
	b, _ := newBoard(t)
	post(t, b.URL, "tok-alice", `{"notebook":"01.ipynb","check":"a","ok":true}`)
	post(t, b.URL, "tok-bob", `{"notebook":"01.ipynb","check":"b","ok":false}`)
	for _, path := range []string{"/services/board/", "/services/board/api/board"} {
		if r, _ := get(t, b.URL+path, "tok-alice"); r.StatusCode != 403 {
			t.Errorf("%s as alice: HTTP %d, want 403", path, r.StatusCode)
		}
		if r, _ := get(t, b.URL+path, ""); r.StatusCode != 401 {
			t.Errorf("%s with no token (no OAuth client): HTTP %d, want 401", path, r.StatusCode)
		}
	}
	r, body := get(t, b.URL+"/services/board/api/board", "tok-inst")
	var v board.View
	if r.StatusCode != 200 || json.Unmarshal([]byte(body), &v) != nil {
		t.Fatalf("api/board as the instructor: HTTP %d %s", r.StatusCode, body)
	}
	if len(v.Participants) != 2 || v.Participants[0].Checks[0].Status != board.Pass || v.Participants[0].Checks[1].Status != board.NotRun ||
		v.Participants[1].Checks[0].Status != board.NotRun || v.Participants[1].Checks[1].Status != board.Fail || len(v.History) != 2 {
		t.Errorf("view = %+v", v)
	}
	r, page := get(t, b.URL+"/services/board/", "tok-inst")
	if r.StatusCode != 200 || !strings.Contains(page, `data-user="bob" data-notebook="01.ipynb" data-check="b" data-status="fail"`) ||
		!strings.Contains(page, `class="queuekit-chart"`) {
		t.Errorf("page: HTTP %d, no bob cell or no chart:\n%s", r.StatusCode, page)
	}
}

func TestBrowserIsSentToTheHubsOAuth(t *testing.T) {
	hub := hubStandIn(t, nil)
	store, _, _ := board.Open(filepath.Join(t.TempDir(), "board.jsonl"))
	defer store.Close()
	srv, err := board.NewServer(store, func(o *board.Options) {
		o.Prefix = "/services/board/"
		o.Hub = &board.Hub{APIURL: hub.URL + "/hub/api"}
		o.ClientID, o.AuthorizeURL, o.TokenURL = "service-board", "/hub/api/oauth2/authorize", hub.URL+"/hub/api/oauth2/token"
		o.CallbackURL = "/services/board/oauth_callback"
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/services/board/", nil))
	loc := rec.Header().Get("Location")
	if rec.Code != http.StatusFound || !strings.HasPrefix(loc, "/hub/api/oauth2/authorize?") || !strings.Contains(loc, "client_id=service-board") {
		t.Errorf("no session: HTTP %d to %q, want a redirect to the hub's authorize URL", rec.Code, loc)
	}
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/services/board/oauth_callback?code=x&state=forged", nil))
	if rec.Code != http.StatusForbidden {
		t.Errorf("callback with a state the board never gave: HTTP %d, want 403", rec.Code)
	}
}

package lab

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/nightqueue/workshop/queuekit/board"
)

// boardRecorder is a board endpoint that keeps what it is sent, decoded as
// the board decodes it, and answers status.
type boardRecorder struct {
	mu      sync.Mutex
	status  int
	reports []board.Report
	auth    []string
	paths   []string
}

func (b *boardRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var rep board.Report
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	err := dec.Decode(&rep)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		rep.Check = "undecodable: " + err.Error()
	}
	b.reports = append(b.reports, rep)
	b.auth = append(b.auth, r.Header.Get("Authorization"))
	b.paths = append(b.paths, r.Method+" "+r.URL.Path)
	w.WriteHeader(b.status)
}

func boardEnv(t *testing.T, url, token string) {
	t.Helper()
	t.Setenv("TMPDIR", t.TempDir()) // the outage marker
	t.Setenv(BoardURLEnv, url)
	t.Setenv(HubTokenEnv, token)
	t.Setenv(SessionEnv, "workshop/03-queueing-parameters.ipynb")
}

func TestSelfChecksReportToTheRoomBoard(t *testing.T) {
	rec := &boardRecorder{status: http.StatusNoContent}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	boardEnv(t, srv.URL+"/services/board/", "tok-alice")
	var ok1, ok2 bool
	out := captureStdout(t, func() {
		ok1 = CheckTrue("a true claim", true, "")
		ok2 = CheckEqual("smallest c", 0, 3, "solve for c")
	})
	if !ok1 || ok2 || !strings.Contains(out, PassMark+"a true claim") || !strings.Contains(out, NotYetMark+"smallest c") {
		t.Fatalf("checks returned %v %v, printed %q", ok1, ok2, out)
	}
	want := []board.Report{{Notebook: "03-queueing-parameters.ipynb", Check: "a true claim", OK: true},
		{Notebook: "03-queueing-parameters.ipynb", Check: "smallest c", OK: false}}
	if len(rec.reports) != 2 {
		t.Fatalf("board got %d reports, want 2: %+v", len(rec.reports), rec.reports)
	}
	for i, w := range want {
		if rec.reports[i] != w || rec.auth[i] != "token tok-alice" || rec.paths[i] != "POST /services/board/api/progress" {
			t.Errorf("report %d = %+v (%q, %s), want %+v with the participant's token", i, rec.reports[i], rec.auth[i], rec.paths[i], w)
		}
	}
}

func TestNotebookNameFromTheSession(t *testing.T) {
	for in, want := range map[string]string{
		"/home/workshop/workshop/workspace/07-fan-out-with-sqs.ipynb": "07-fan-out-with-sqs.ipynb",
		"03-queueing-parameters.ipynb":                                "03-queueing-parameters.ipynb",
		"/home/workshop/workshop/workspace/":                          "", // a session with no name
		"":                                                            "", "console-1": "",
	} {
		if got := notebookName(in); got != want {
			t.Errorf("notebookName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOutsideARoomSelfChecksReportNothing(t *testing.T) {
	rec := &boardRecorder{status: http.StatusNoContent}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	for _, env := range [][2]string{{"", "tok"}, {srv.URL, ""}} { // no board URL; no hub token
		boardEnv(t, env[0], env[1])
		captureStdout(t, func() { CheckTrue("claim", true, "") })
	}
	if len(rec.reports) != 0 {
		t.Errorf("reports sent outside a room: %+v", rec.reports)
	}
}

// A board that refuses or is gone: the check still answers, one line on
// stderr, and for boardPause no cell tries again.
func TestABoardThatIsDownIsToldOnceAndSkipped(t *testing.T) {
	rec := &boardRecorder{status: http.StatusBadGateway}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	boardEnv(t, srv.URL, "tok")
	var ok bool
	captureStdout(t, func() {
		ok = CheckTrue("claim", true, "")
		CheckTrue("claim 2", true, "")
	})
	if !ok || len(rec.reports) != 1 {
		t.Fatalf("check = %v, %d attempts; want true and 1 (the second skipped)", ok, len(rec.reports))
	}
	srv.Close() // gone: nothing listens; still no attempt while the pause lasts
	captureStdout(t, func() { ok = CheckTrue("claim 3", false, "") })
	if ok || len(rec.reports) != 1 {
		t.Errorf("check = %v, %d attempts", ok, len(rec.reports))
	}
}

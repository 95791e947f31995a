package ttllab

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/nightqueue/workshop/queuekit/board"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// CheckTTLChoice reports to the room board under the name the board's
// catalog lists for it (its name is inside ttllab, not in the notebook).
func TestTTLCheckNameIsTheBoardsFixedName(t *testing.T) {
	var (
		mu      sync.Mutex
		reports []board.Report
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rep board.Report
		if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
			rep.Check = "undecodable: " + err.Error()
		}
		mu.Lock()
		reports = append(reports, rep)
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	t.Setenv("TMPDIR", t.TempDir()) // the outage marker
	t.Setenv(lab.BoardURLEnv, srv.URL)
	t.Setenv(lab.HubTokenEnv, "tok")
	t.Setenv(lab.SessionEnv, "workshop/06-timers-ttl-streams.ipynb")
	CheckTTLChoice(nil)
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || reports[0].Check != board.FixedChecks["CheckTTLChoice"] {
		t.Errorf("CheckTTLChoice reported %+v, want the name %q the board's catalog lists", reports, board.FixedChecks["CheckTTLChoice"])
	}
}

package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// boardReport is what the board's POST api/progress takes (board.Report; a
// test decodes it as one).
type boardReport struct {
	Notebook string `json:"notebook"`
	Check    string `json:"check"`
	OK       bool   `json:"ok"`
}

// The environment a self-check reads to report to the room board. In a
// workshop room the hub's spawner sets all three in every participant's
// server; anywhere else BoardURLEnv is unset and the checks report nothing.
const (
	// BoardURLEnv is the board service's base URL (…/services/board/).
	BoardURLEnv = "QUEUEKIT_BOARD_URL"
	// HubTokenEnv is the participant's own hub API token: the board asks the
	// hub whose it is, so nobody can report as someone else.
	HubTokenEnv = "JUPYTERHUB_API_TOKEN"
	// SessionEnv is the notebook's path, set by Jupyter Server for a kernel
	// it starts for a notebook; GoNB passes it on to every cell's program.
	SessionEnv = "JPY_SESSION_NAME"
)

// boardTimeout bounds one report: the board is on the room's host, so a
// live board answers in milliseconds, and a dead one costs a cell at most
// this much once per boardPause.
var (
	boardTimeout = time.Second
	boardPause   = time.Minute
)

// reportToBoard sends one self-check's result to the room board, if there is
// one. Each notebook cell is a program of its own that ends with the cell, so
// the report is sent before the check returns, with a short timeout. A board
// that does not answer is noted in a marker file: for boardPause no cell
// tries again, and the first failure of an outage prints one line to stderr.
func reportToBoard(ok bool, name string) {
	base := strings.TrimSpace(os.Getenv(BoardURLEnv))
	token := os.Getenv(HubTokenEnv)
	if base == "" || token == "" {
		return
	}
	marker := filepath.Join(os.TempDir(), "queuekit-board-down-"+strconv.Itoa(os.Getuid()))
	if st, err := os.Stat(marker); err == nil && time.Since(st.ModTime()) < boardPause {
		return
	}
	err := postReport(base, token, boardReport{Notebook: notebookName(os.Getenv(SessionEnv)), Check: name, OK: ok})
	if err == nil {
		_ = os.Remove(marker)
		return
	}
	_, statErr := os.Stat(marker)
	_ = os.WriteFile(marker, []byte(err.Error()+"\n"), 0o600)
	_ = os.Chtimes(marker, time.Now(), time.Now())
	if statErr != nil { // first failure since the board last answered
		fmt.Fprintf(os.Stderr, "room board: %v; your self-checks work as before, the board is told again in a minute\n", err)
	}
}

// notebookName is the notebook's file name from JPY_SESSION_NAME: Jupyter
// Server sets it to the kernel's directory joined with the session's name,
// which JupyterLab sets to the notebook's file name. A session with no name
// (a bare directory) or a console has none.
func notebookName(session string) string {
	if !strings.HasSuffix(session, ".ipynb") {
		return ""
	}
	return filepath.Base(session)
}

func postReport(base, token string, r boardReport) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), boardTimeout)
	defer cancel()
	url := strings.TrimSuffix(base, "/") + "/api/progress"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", url, err)
	}
	req.Header.Set("Authorization", "token "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s did not answer (limit %v)", url, boardTimeout)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s refused the report (HTTP %d)", url, resp.StatusCode)
	}
	return nil
}

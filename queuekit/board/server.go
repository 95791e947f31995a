package board

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/oauth2"
)

// Options configure a Server. NewServer fills them from JupyterHub's
// environment for a service (FromEnv) before the functional options run.
type Options struct {
	Prefix       string  // URL prefix the proxy routes here (JUPYTERHUB_SERVICE_PREFIX), ends in /
	Hub          *Hub    // resolves tokens
	ClientID     string  // OAuth client id (JUPYTERHUB_CLIENT_ID)
	ClientSecret string  // the service's own API token (JUPYTERHUB_API_TOKEN)
	AuthorizeURL string  // the hub's OAuth authorize URL as the browser sees it
	TokenURL     string  // the hub's OAuth token URL as the service reaches it
	CallbackURL  string  // JUPYTERHUB_OAUTH_CALLBACK_URL
	Catalog      Catalog // the notebooks' self-checks
	EChartsFile  string  // echarts.min.js served under Prefix/assets/
	Refresh      int     // seconds between page reloads (0: never)
	Log          *log.Logger
	Now          func() time.Time
	Names        func(ctx context.Context) ([]string, error) // the room's participants (optional)
}

// FromEnv fills o from the environment JupyterHub gives a managed service.
func FromEnv(o *Options) {
	api := strings.TrimSuffix(os.Getenv("JUPYTERHUB_API_URL"), "/")
	o.Prefix = os.Getenv("JUPYTERHUB_SERVICE_PREFIX")
	o.Hub = &Hub{APIURL: api, CacheFor: 20 * time.Second}
	o.ClientID = os.Getenv("JUPYTERHUB_CLIENT_ID")
	o.ClientSecret = os.Getenv("JUPYTERHUB_API_TOKEN")
	base := os.Getenv("JUPYTERHUB_BASE_URL")
	if base == "" {
		base = "/"
	}
	o.AuthorizeURL = os.Getenv("JUPYTERHUB_HOST") + base + "hub/api/oauth2/authorize"
	o.TokenURL = api + "/oauth2/token"
	o.CallbackURL = os.Getenv("JUPYTERHUB_OAUTH_CALLBACK_URL")
}

// Server is the board's HTTP handler.
type Server struct {
	o     Options
	store *Store
	oauth *oauth2.Config
	mux   *http.ServeMux
}

// Cookie names (path: the service's prefix).
const (
	tokenCookie = "queuekit-board-token"
	stateCookie = "queuekit-board-state"
)

// NewServer returns the board over store.
func NewServer(store *Store, opts ...func(*Options)) (*Server, error) {
	o := Options{Refresh: 10, Now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if o.Prefix == "" || !strings.HasPrefix(o.Prefix, "/") || !strings.HasSuffix(o.Prefix, "/") {
		return nil, fmt.Errorf("board: prefix %q must start and end with / (JUPYTERHUB_SERVICE_PREFIX)", o.Prefix)
	}
	if o.Hub == nil || o.Hub.APIURL == "" {
		return nil, errors.New("board: no hub API URL (JUPYTERHUB_API_URL): run it as a JupyterHub service")
	}
	if o.Log == nil {
		o.Log = log.New(os.Stderr, "board: ", log.LstdFlags)
	}
	s := &Server{o: o, store: store, mux: http.NewServeMux()}
	if o.ClientID != "" {
		s.oauth = &oauth2.Config{ClientID: o.ClientID, ClientSecret: o.ClientSecret, RedirectURL: o.CallbackURL,
			Endpoint: oauth2.Endpoint{AuthURL: o.AuthorizeURL, TokenURL: o.TokenURL, AuthStyle: oauth2.AuthStyleInParams}}
	}
	p := o.Prefix
	s.mux.HandleFunc("GET "+p+"{$}", s.page)
	s.mux.HandleFunc("GET "+p+"oauth_callback", s.callback)
	s.mux.HandleFunc("GET "+p+"api/board", s.boardAPI)
	s.mux.HandleFunc("POST "+p+"api/progress", s.progress)
	s.mux.HandleFunc("GET "+p+"assets/echarts.min.js", s.echarts)
	return s, nil
}

// ServeHTTP serves the board.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// headerToken is the token of an "Authorization: token …" (or Bearer) header.
func headerToken(r *http.Request) string {
	h := r.Header.Get("Authorization")
	for _, p := range []string{"token ", "Token ", "bearer ", "Bearer "} {
		if strings.HasPrefix(h, p) {
			return strings.TrimSpace(h[len(p):])
		}
	}
	return ""
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}

// progress records a self-check's report under the name the hub gives its token.
func (s *Server) progress(w http.ResponseWriter, r *http.Request) {
	tok := headerToken(r)
	if tok == "" {
		fail(w, http.StatusUnauthorized, "no token: a self-check reports with its server's JUPYTERHUB_API_TOKEN")
		return
	}
	id, err := s.o.Hub.Whoami(r.Context(), tok)
	if errors.Is(err, ErrBadToken) {
		fail(w, http.StatusForbidden, "the hub does not accept this token")
		return
	}
	if err != nil {
		s.o.Log.Printf("progress: %v", err)
		fail(w, http.StatusBadGateway, "the hub did not answer")
		return
	}
	if id.Kind != "user" {
		fail(w, http.StatusForbidden, "only a participant's token reports progress")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxReportLen+1))
	if err != nil || len(body) > MaxReportLen {
		fail(w, http.StatusBadRequest, fmt.Sprintf("a report is at most %d bytes of JSON", MaxReportLen))
		return
	}
	var rep Report
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		fail(w, http.StatusBadRequest, "a report is JSON {notebook, check, ok}: "+err.Error())
		return
	}
	if rep.User != "" && rep.User != id.Name {
		fail(w, http.StatusForbidden, fmt.Sprintf("this token belongs to %s, not %s: nobody reports for someone else", id.Name, rep.User))
		return
	}
	for field, v := range map[string]string{"check": rep.Check, "notebook": rep.Notebook} {
		if (field == "check" && v == "") || len(v) > MaxNameLen || !utf8.ValidString(v) {
			fail(w, http.StatusBadRequest, fmt.Sprintf("%s: want 1 to %d bytes of UTF-8", field, MaxNameLen))
			return
		}
	}
	e := Event{Time: s.o.Now().UTC(), User: id.Name, Notebook: rep.Notebook, Check: rep.Check, OK: rep.OK}
	if err := s.store.Add(e); err != nil {
		s.o.Log.Printf("progress: %v", err)
		fail(w, http.StatusInternalServerError, "the board could not record the report")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// instructor resolves the caller (header token or the OAuth cookie) and
// answers 401/403 itself unless the caller is an admin; ok says go on.
// A browser with no session is sent through the hub's OAuth first.
func (s *Server) instructor(w http.ResponseWriter, r *http.Request, browser bool) (Identity, bool) {
	tok := headerToken(r)
	if tok == "" {
		if c, err := r.Cookie(tokenCookie); err == nil {
			tok = c.Value
		}
	}
	if tok == "" {
		if browser && s.oauth != nil {
			s.login(w, r)
			return Identity{}, false
		}
		fail(w, http.StatusUnauthorized, "sign in to the hub as the instructor, or send an admin's API token")
		return Identity{}, false
	}
	id, err := s.o.Hub.Whoami(r.Context(), tok)
	switch {
	case errors.Is(err, ErrBadToken):
		if browser && s.oauth != nil { // an old session: sign in again
			s.login(w, r)
			return Identity{}, false
		}
		fail(w, http.StatusForbidden, "the hub does not accept this token")
		return Identity{}, false
	case err != nil:
		s.o.Log.Printf("board: %v", err)
		fail(w, http.StatusBadGateway, "the hub did not answer")
		return Identity{}, false
	case !id.Admin:
		if browser {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusForbidden)
			_ = forbiddenPage.Execute(w, id.Name)
			return Identity{}, false
		}
		fail(w, http.StatusForbidden, id.Name+" is not an admin: the board is for the instructor")
		return Identity{}, false
	}
	return id, true
}

// login starts the hub's OAuth: a random state in a cookie, then the authorize URL.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		fail(w, http.StatusInternalServerError, "no randomness for the OAuth state")
		return
	}
	state := hex.EncodeToString(b[:])
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: state, Path: s.o.Prefix, MaxAge: 600, HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, s.oauth.AuthCodeURL(state), http.StatusFound)
}

func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// callback ends the OAuth: the state must match, the code becomes a token
// (kept in an HttpOnly cookie on the service's prefix).
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	if s.oauth == nil {
		fail(w, http.StatusNotFound, "no OAuth client configured")
		return
	}
	c, err := r.Cookie(stateCookie)
	if err != nil || c.Value == "" || c.Value != r.URL.Query().Get("state") {
		fail(w, http.StatusForbidden, "OAuth state does not match: open the board again")
		return
	}
	tok, err := s.oauth.Exchange(r.Context(), r.URL.Query().Get("code"))
	if err != nil {
		s.o.Log.Printf("oauth: %v", err)
		fail(w, http.StatusForbidden, "the hub refused the sign-in: open the board again")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: stateCookie, Value: "", Path: s.o.Prefix, MaxAge: -1})
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok.AccessToken, Path: s.o.Prefix, HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteLaxMode})
	http.Redirect(w, r, s.o.Prefix, http.StatusFound)
}

// View is what the board's API returns and its page shows.
type View struct {
	Time         time.Time     `json:"time"`
	Participants []Participant `json:"participants"`
	History      []Point       `json:"history"`
}

// MaxChartPoints bounds the chart's points.
const MaxChartPoints = 300

func (s *Server) view(ctx context.Context) View {
	events := s.store.Events()
	var names []string
	if s.o.Names != nil {
		n, err := s.o.Names(ctx)
		if err != nil {
			s.o.Log.Printf("participants: %v", err)
		}
		names = n
	}
	return View{Time: s.o.Now().UTC(), Participants: State(events, s.o.Catalog, names), History: History(events, MaxChartPoints)}
}

func (s *Server) boardAPI(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.instructor(w, r, false); !ok {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(s.view(r.Context()))
}

func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	id, ok := s.instructor(w, r, true)
	if !ok {
		return
	}
	html, err := renderPage(s.view(r.Context()), id.Name, s.o.Prefix, s.o.Refresh)
	if err != nil {
		s.o.Log.Printf("page: %v", err)
		fail(w, http.StatusInternalServerError, "the board could not draw its page")
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, html)
}

func (s *Server) echarts(w http.ResponseWriter, r *http.Request) {
	if s.o.EChartsFile == "" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/javascript")
	http.ServeFile(w, r, s.o.EChartsFile)
}

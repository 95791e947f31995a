package board

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Identity is who a token belongs to, as the hub's GET /hub/api/user says.
type Identity struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"` // "user" or "service"
	Admin bool   `json:"admin"`
}

// ErrBadToken is a token the hub does not accept.
var ErrBadToken = errors.New("the hub does not accept this token")

// Hub asks JupyterHub's REST API who a token belongs to, and remembers the
// answer for CacheFor (a revoked token keeps working that long at most).
type Hub struct {
	APIURL   string // JUPYTERHUB_API_URL, e.g. http://127.0.0.1:8081/hub/api
	Client   *http.Client
	CacheFor time.Duration

	mu    sync.Mutex
	cache map[[32]byte]cached
}

type cached struct {
	id    Identity
	err   error
	until time.Time
}

// Whoami resolves token with GET {APIURL}/user. A token the hub refuses is
// ErrBadToken; a hub that cannot be reached or answers otherwise is another
// error.
func (h *Hub) Whoami(ctx context.Context, token string) (Identity, error) {
	key := sha256.Sum256([]byte(token))
	now := time.Now()
	h.mu.Lock()
	if c, ok := h.cache[key]; ok && now.Before(c.until) {
		h.mu.Unlock()
		return c.id, c.err
	}
	h.mu.Unlock()
	id, err := h.ask(ctx, token)
	if err == nil || errors.Is(err, ErrBadToken) {
		h.mu.Lock()
		if h.cache == nil || len(h.cache) > 10_000 {
			h.cache = map[[32]byte]cached{}
		}
		h.cache[key] = cached{id, err, now.Add(h.CacheFor)}
		h.mu.Unlock()
	}
	return id, err
}

func (h *Hub) ask(ctx context.Context, token string) (Identity, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(h.APIURL, "/")+"/user", nil)
	if err != nil {
		return Identity{}, fmt.Errorf("hub API %s: %w", h.APIURL, err)
	}
	req.Header.Set("Authorization", "token "+token)
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return Identity{}, fmt.Errorf("hub API %s unreachable: %w", h.APIURL, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return Identity{}, ErrBadToken
	case resp.StatusCode != http.StatusOK:
		return Identity{}, fmt.Errorf("hub API %s/user answered HTTP %d", h.APIURL, resp.StatusCode)
	}
	var id Identity
	if err := json.Unmarshal(body, &id); err != nil || id.Name == "" {
		return Identity{}, fmt.Errorf("hub API %s/user: not a user model", h.APIURL)
	}
	return id, nil
}

// Participants lists the hub's users who are not admins, with token (the
// service's own, which needs the scopes list:users and read:users).
func (h *Hub) Participants(ctx context.Context, token string) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(h.APIURL, "/")+"/users", nil)
	if err != nil {
		return nil, fmt.Errorf("hub API %s: %w", h.APIURL, err)
	}
	req.Header.Set("Authorization", "token "+token)
	c := h.Client
	if c == nil {
		c = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("hub API %s unreachable: %w", h.APIURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("hub API %s/users answered HTTP %d (the service needs list:users and read:users)", h.APIURL, resp.StatusCode)
	}
	var users []Identity
	if err := json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&users); err != nil {
		return nil, fmt.Errorf("hub API %s/users: %w", h.APIURL, err)
	}
	var names []string
	for _, u := range users {
		if !u.Admin && u.Name != "" {
			names = append(names, u.Name)
		}
	}
	return names, nil
}

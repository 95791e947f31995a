package jars

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
)

// updateLock rewrites servers.lock's sizes and hashes from the registries.
var updateLock = flag.Bool("update-lock", false, "download every URL of servers.lock, check it against npm's integrity or Maven Central's .sha1, and rewrite the lock")

// lineWriter sends each line written to it to t.Log.
type lineWriter struct{ t *testing.T }

func (w lineWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Both servers install from the real registries into a temporary
// directory, every file matching servers.lock. It needs HTTPS to
// registry.npmjs.org and repo.maven.apache.org (the CI machine has both),
// about 89 MB, and is never skipped: without them it fails saying so.
// With -update-lock it regenerates servers.lock instead.
func TestFromTheRegistries(t *testing.T) {
	if *updateLock {
		regenerate(t)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir := t.TempDir()
	for _, s := range []Server{DynamoDBLocal, ElasticMQ} {
		d := filepath.Join(dir, s.Name)
		if _, err := Install(ctx, s, d, fetch.Options{Log: lineWriter{t}}); err != nil {
			t.Fatalf("could not install %s from the registries: %v\n"+
				"This test needs HTTPS to registry.npmjs.org and repo.maven.apache.org (HTTPS_PROXY and SSL_CERT_FILE are honoured).", s.Label, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "dynamodb-local", "3.3.1", "DynamoDBLocal.jar")); err != nil {
		t.Error(err)
	}
	libs, _ := filepath.Glob(filepath.Join(dir, "dynamodb-local", "3.3.1", "DynamoDBLocal_lib", "*.jar"))
	if len(libs) < 50 {
		t.Errorf("DynamoDBLocal_lib holds %d jars, want the release's libraries (over 50)", len(libs))
	}
	jars, _ := filepath.Glob(filepath.Join(dir, "elasticmq", "1.7.1", "lib", "*.jar"))
	if len(jars) != len(ElasticMQ.Files) {
		t.Errorf("ElasticMQ's lib holds %d jars, want %d", len(jars), len(ElasticMQ.Files))
	}
}

// regenerate rewrites servers.lock: every URL downloaded, its size and
// SHA-256 recorded, and its bytes checked against what the registry itself
// publishes (npm's integrity and tarball URL, Maven Central's .sha1).
func regenerate(t *testing.T) {
	const name = "servers.lock"
	text, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(text), "\n"), "\n")
	for i, line := range lines {
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(f[0], "#") {
			continue
		}
		url := f[1]
		body := get(t, url)
		s256, s512 := sha256.Sum256(body), sha512.Sum512(body)
		out := fmt.Sprintf("%s %s %d sha256:%s", f[0], url, len(body), hex.EncodeToString(s256[:]))
		switch {
		case strings.HasPrefix(url, "https://registry.npmjs.org/"):
			integrity := "sha512-" + base64.StdEncoding.EncodeToString(s512[:])
			pkg := strings.Split(strings.TrimPrefix(url, "https://registry.npmjs.org/"), "/-/")[0]
			version := strings.TrimSuffix(strings.TrimPrefix(path.Base(url), path.Base(pkg)+"-"), ".tgz")
			var meta struct {
				Dist struct{ Integrity, Tarball string }
			}
			if err := json.Unmarshal(get(t, "https://registry.npmjs.org/"+pkg+"/"+version), &meta); err != nil {
				t.Fatalf("%s@%s metadata: %v", pkg, version, err)
			}
			if meta.Dist.Integrity != integrity || meta.Dist.Tarball != url {
				t.Fatalf("%s: npm says %s at %s, the download is %s", url, meta.Dist.Integrity, meta.Dist.Tarball, integrity)
			}
			out += " " + integrity
		case strings.HasPrefix(url, "https://repo.maven.apache.org/maven2/"):
			s1 := sha1.Sum(body)
			if want := strings.Fields(string(get(t, url+".sha1")))[0]; want != hex.EncodeToString(s1[:]) {
				t.Fatalf("%s: Maven Central's .sha1 is %s, the download's %x", url, want, s1)
			}
		default:
			t.Fatalf("%s: no registry check for this host; add one here", url)
		}
		lines[i] = out
	}
	if err := os.WriteFile(name, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: HTTP %s", url, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return b
}

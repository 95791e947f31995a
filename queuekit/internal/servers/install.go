package servers

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/nightqueue/workshop/queuekit/internal/fetch"
	"github.com/nightqueue/workshop/queuekit/internal/jars"
)

// launcherSrc is the loopback launcher of DynamoDB Local, in the checkout.
// The jar has no option for the listen address and binds every interface;
// this class, compiled with javac against the unmodified jar, builds the
// server as the jar's own ServerRunner does, with its Jetty connector's host
// set to 127.0.0.1, and exits rather than listen anywhere else.
const (
	launcherSrc   = "tools/dynamodb-launcher/LoopbackServerRunner.java"
	launcherClass = "LoopbackServerRunner"
)

// javaHint is how to install a JDK, in one line.
const javaHint = "install a JDK 17+ (macOS: brew install openjdk@17; Debian/Ubuntu: apt-get install openjdk-17-jdk-headless; Windows: in WSL2, as on Ubuntu)"

// install installs the server's files when missing: the pinned jars
// (package jars, over HTTPS, checked against servers.lock) and, for DynamoDB
// Local, the compiled launcher. It checks that java is there first.
func (s *server) install(ctx context.Context) error {
	var js jars.Server
	switch s.name {
	case DynamoDB:
		js = jars.DynamoDBLocal
	case SQS:
		js = jars.ElasticMQ
	default:
		return nil
	}
	if _, err := exec.LookPath("java"); err != nil {
		return fmt.Errorf("%s: java is not installed; %s needs Java 17+: %s", s.file, s.label, javaHint)
	}
	if _, err := jars.Install(ctx, js, s.dir, fetch.Options{Log: s.cfg.log, Prefix: s.file}); err != nil {
		return fmt.Errorf("%s: could not install %s (%w); rerun to resume: queuekit servers install", s.file, js.Label, err)
	}
	if s.name == DynamoDB {
		return s.installLauncher()
	}
	return nil
}

// launcherDir is where the launcher compiled from this source, for this jar
// and this javac, lives: the key is what the old shell script computed,
// so a launcher it compiled is reused.
func (s *server) launcherDir() (string, error) {
	javac, err := exec.LookPath("javac")
	if err != nil {
		return "", fmt.Errorf("%s: javac is not installed; the loopback launcher needs a JDK, not only a JRE: %s", s.file, javaHint)
	}
	if real, err := filepath.EvalSymlinks(javac); err == nil {
		javac = real
	}
	if abs, err := filepath.Abs(javac); err == nil {
		javac = abs
	}
	src, err := os.ReadFile(filepath.Join(s.root, launcherSrc))
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.file, err)
	}
	h := sha256.New()
	h.Write(src)
	fmt.Fprintf(h, "%s\n%s\n", jars.DynamoDBLocal.Version, javac)
	return filepath.Join(s.dir, "launcher", hex.EncodeToString(h.Sum(nil))[:16]), nil
}

func (s *server) installLauncher() error {
	out, err := s.launcherDir()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(out, launcherClass+".class")); err == nil {
		return nil
	}
	s.say("compiling the loopback launcher (%s) against DynamoDBLocal.jar %s", launcherSrc, jars.DynamoDBLocal.Version)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".javac.")
	if err != nil {
		return fmt.Errorf("%s: %w", s.file, err)
	}
	jar := filepath.Join(jars.DynamoDBLocal.Home(s.dir), "DynamoDBLocal.jar")
	cmd := exec.Command("javac", "-nowarn", "-d", tmp, "-cp", jar, filepath.Join(s.root, launcherSrc))
	if msg, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(tmp)
		first, _, _ := strings.Cut(strings.TrimSpace(string(msg)), "\n")
		return fmt.Errorf("%s: javac could not compile %s against %s: %s (%w)", s.file, launcherSrc, jar, first, err)
	}
	_ = os.Chmod(tmp, 0o755)
	// Another run may have compiled the same launcher meanwhile: keep the first.
	if err := os.Rename(tmp, out); err != nil {
		os.RemoveAll(tmp)
	}
	return nil
}

// InstallLauncher compiles DynamoDB Local's loopback launcher for the jar
// installed under dir (DYNAMODB_LOCAL_DIR's layout), when it is not there
// yet; step lines go to log. It needs javac.
func InstallLauncher(root, dir string, log io.Writer) error {
	c := newConfig([]Option{WithLog(log)})
	s, err := c.server(root, DynamoDB)
	if err != nil {
		return err
	}
	s.dir = dir
	return s.installLauncher()
}

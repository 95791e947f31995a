package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/types"
)

// elasticMQVersion reads the version queuekit/internal/jars pins (the
// ElasticMQ entry's Version: "x.y.z"), the one the workshop runs without Docker.
func elasticMQVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root(t), "queuekit", "internal", "jars", "jars.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Name: "elasticmq", Label: "ElasticMQ [0-9.]+", Version: "(\d+\.\d+\.\d+)"`).FindSubmatch(data)
	if m == nil {
		t.Fatal(`queuekit/internal/jars/jars.go has no ElasticMQ entry with Version: "x.y.z"`)
	}
	return string(m[1])
}

func TestComposeSQSImageIsTheScriptsPinnedVersion(t *testing.T) {
	want := "softwaremill/elasticmq-native:" + elasticMQVersion(t)
	if img := service(t, loadCompose(t), "sqs").Image; img != want {
		t.Errorf("sqs image = %q, want %q (the version queuekit servers runs)", img, want)
	}
}

func TestComposeSQSIsPublishedOnLoopback(t *testing.T) {
	s := service(t, loadCompose(t), "sqs")
	if len(s.Ports) != 1 || s.Ports[0].Target != 9324 || s.Ports[0].HostIP != "127.0.0.1" || s.Ports[0].Published != "9324" {
		t.Errorf("sqs ports = %+v, want exactly 127.0.0.1:9324:9324 (SQS_PORT unset)", s.Ports)
	}
}

// elasticMQConfig returns the content of the config the sqs service mounts
// over the image's /opt/elasticmq.conf.
func elasticMQConfig(t *testing.T) string {
	t.Helper()
	p := loadCompose(t)
	s := service(t, p, "sqs")
	i := slices.IndexFunc(s.Configs, func(c types.ServiceConfigObjConfig) bool { return c.Target == "/opt/elasticmq.conf" })
	if i < 0 {
		t.Fatalf("sqs mounts no config at /opt/elasticmq.conf (the file the image's entrypoint reads): %+v", s.Configs)
	}
	c, ok := p.Configs[s.Configs[i].Source]
	if !ok || c.Content == "" {
		t.Fatalf("config %q is not declared with inline content under top-level configs", s.Configs[i].Source)
	}
	return c.Content
}

// TestComposeSQSConfigRunsInElasticMQ starts the real ElasticMQ that
// `queuekit servers install --elasticmq` installs with the compose config, on 127.0.0.1 and a
// free port instead of 0.0.0.0:9324, and checks that it answers SQS and names
// queues after the sqs service, as the lab reaches it.
func TestComposeSQSConfigRunsInElasticMQ(t *testing.T) {
	conf := elasticMQConfig(t)
	for _, want := range []string{`include classpath("application.conf")`, "host = sqs", "port = 9324", `bind-hostname = "0.0.0.0"`, "bind-port = 9324"} {
		if !strings.Contains(conf, want) {
			t.Fatalf("the sqs config lacks %q:\n%s", want, conf)
		}
	}
	install := exec.Command("go", "run", "./queuekit/cmd/queuekit", "servers", "install", "--elasticmq")
	install.Dir = root(t)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("queuekit servers install --elasticmq: %v\n%s", err, out)
	}
	port := freePort(t)
	hostConf := strings.Replace(conf, `bind-hostname = "0.0.0.0"`, `bind-hostname = "127.0.0.1"`, 1)
	hostConf = strings.Replace(hostConf, "bind-port = 9324", fmt.Sprintf("bind-port = %d", port), 1)
	dir := t.TempDir()
	confPath := filepath.Join(dir, "elasticmq.conf")
	if err := os.WriteFile(confPath, []byte(hostConf), 0o644); err != nil {
		t.Fatal(err)
	}
	lib := filepath.Join(root(t), ".cache", "elasticmq", elasticMQVersion(t), "lib")
	if d := os.Getenv("ELASTICMQ_DIR"); d != "" {
		lib = filepath.Join(d, elasticMQVersion(t), "lib")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-Djava.net.preferIPv4Stack=true", "-Xmx128m", "-XX:TieredStopAtLevel=1",
		"-XX:+UseSerialGC", "-Dconfig.file="+confPath, "-cp", filepath.Join(lib, "*"), "org.elasticmq.server.Main")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ElasticMQ: %v", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	endpoint := fmt.Sprintf("http://127.0.0.1:%d/", port)
	var out map[string]any
	deadline := time.Now().Add(90 * time.Second)
	for {
		var err error
		if out, err = sqsCall(endpoint, "CreateQueue", `{"QueueName":"compose-check"}`); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ElasticMQ with the compose config never answered CreateQueue on %s: %v\nlog:\n%s", endpoint, err, log.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
	if url, _ := out["QueueUrl"].(string); url != "http://sqs:9324/000000000000/compose-check" {
		t.Errorf("QueueUrl = %q, want http://sqs:9324/000000000000/compose-check (the lab's view of the sqs service)", url)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sqsCall makes one SQS call in the AWS JSON protocol and decodes the answer.
func sqsCall(endpoint, op, body string) (map[string]any, error) {
	req, err := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Amz-Target", "AmazonSQS."+op)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: HTTP %d: %s", op, resp.StatusCode, data)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %w: %s", op, err, data)
	}
	return out, nil
}

// TestComposeSQSHealthcheckNeedsAnSQSAnswer runs the real healthcheck command
// with /bin/sh and wget (busybox's in the image) against a server that answers
// ListQueues like SQS, servers that answer HTTP but not SQS, and no server.
func TestComposeSQSHealthcheckNeedsAnSQSAnswer(t *testing.T) {
	hc := service(t, loadCompose(t), "sqs").HealthCheck
	if hc == nil || hc.Disable || len(hc.Test) != 2 || hc.Test[0] != "CMD-SHELL" {
		t.Fatalf("sqs healthcheck = %+v, want a CMD-SHELL command", hc)
	}
	cmd := hc.Test[1]
	const inImage = "http://127.0.0.1:9324"
	if !strings.Contains(cmd, inImage+"/") {
		t.Fatalf("healthcheck %q does not ask %s/", cmd, inImage)
	}
	if _, err := exec.LookPath("wget"); err != nil {
		t.Fatal("wget is not installed, so the healthcheck cannot be run here (Debian: apt-get install wget)")
	}
	sqsLike := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("X-Amz-Target") == "AmazonSQS.ListQueues" {
			_, _ = io.WriteString(w, `{"QueueUrls":[]}`)
			return
		}
		http.Error(w, "not SQS", http.StatusBadRequest)
	})
	for _, tc := range []struct {
		name    string
		h       http.Handler
		healthy bool
	}{
		{"SQS answers ListQueues", sqsLike, true},
		{"any HTTP 200", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }), false},
		{"DynamoDB-like 400", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, `{"__type":"MissingAuthenticationToken"}`, http.StatusBadRequest)
		}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.h)
			defer srv.Close()
			err := exec.Command("/bin/sh", "-c", strings.ReplaceAll(cmd, inImage, srv.URL)).Run()
			if (err == nil) != tc.healthy {
				t.Errorf("healthcheck: err = %v, want healthy = %v", err, tc.healthy)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		url := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
		if err := exec.Command("/bin/sh", "-c", strings.ReplaceAll(cmd, inImage, url)).Run(); err == nil {
			t.Error("healthcheck passes when nothing listens")
		}
	})
}

func TestComposeLabWaitsForHealthySQSAndUsesIt(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	dep, ok := s.DependsOn["sqs"]
	if !ok || dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("lab depends_on sqs = %+v (present %v), want condition %q", dep, ok, types.ServiceConditionHealthy)
	}
	if v := s.Environment["AWS_ENDPOINT_URL_SQS"]; v == nil || *v != "http://sqs:9324" {
		t.Errorf("lab AWS_ENDPOINT_URL_SQS = %v, want http://sqs:9324", v)
	}
}

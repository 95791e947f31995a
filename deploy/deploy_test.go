package deploy

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/buildkit/frontend/dockerfile/parser"
	"golang.org/x/mod/modfile"
)

// root is the repository root: this module lives in <root>/deploy.
func root(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// loadCompose loads docker-compose.yml with compose-go, as `docker compose` does,
// in a clean environment so host variables do not change what is checked.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	dir := root(t)
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(dir, "docker-compose.yml")},
		cli.WithWorkingDirectory(dir),
		cli.WithEnv(nil),
	)
	if err != nil {
		t.Fatalf("compose options: %v", err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load with compose-go: %v", err)
	}
	return p
}

func service(t *testing.T, p *types.Project, name string) types.ServiceConfig {
	t.Helper()
	s, err := p.GetService(name)
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return s
}

// pinnedDynamoDB is an exact 3.x release tag of the official image, never latest.
var pinnedDynamoDB = regexp.MustCompile(`^amazon/dynamodb-local:3\.\d+\.\d+(@sha256:[0-9a-f]{64})?$`)

func TestComposeDynamoDBImageIsAPinned3xTag(t *testing.T) {
	p := loadCompose(t)
	for _, s := range p.Services {
		if strings.HasPrefix(s.Image, "amazon/dynamodb-local") && !pinnedDynamoDB.MatchString(s.Image) {
			t.Errorf("service %s: image %q is not a pinned amazon/dynamodb-local:3.x.y tag", s.Name, s.Image)
		}
	}
	if img := service(t, p, "dynamodb").Image; !pinnedDynamoDB.MatchString(img) {
		t.Errorf("dynamodb image = %q, want amazon/dynamodb-local:3.x.y", img)
	}
}

func TestComposeDynamoDBPersistsToANamedVolume(t *testing.T) {
	p := loadCompose(t)
	s := service(t, p, "dynamodb")
	wantCmd := []string{"-jar", "DynamoDBLocal.jar", "-sharedDb", "-dbPath", "./data"}
	if !slices.Equal([]string(s.Command), wantCmd) {
		t.Errorf("dynamodb command = %q, want %q", s.Command, wantCmd)
	}
	if s.WorkingDir != "/home/dynamodblocal" {
		t.Errorf("dynamodb working_dir = %q, want /home/dynamodblocal (./data is relative to it)", s.WorkingDir)
	}
	var found bool
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeVolume && v.Target == "/home/dynamodblocal/data" {
			found = true
			if _, ok := p.Volumes[v.Source]; !ok {
				t.Errorf("volume %q is not declared under top-level volumes", v.Source)
			}
		}
	}
	if !found {
		t.Errorf("dynamodb has no named volume at /home/dynamodblocal/data: %+v", s.Volumes)
	}
}

// The dynamodb healthcheck uses bash alone (no curl, no wget): exec form
// ["CMD", "bash", "-c", SCRIPT], SCRIPT reading the status line from
// 127.0.0.1:8000 through bash's /dev/tcp.
func TestComposeDynamoDBHealthcheckAcceptsHTTP400(t *testing.T) {
	s := service(t, loadCompose(t), "dynamodb")
	hc := s.HealthCheck
	if hc == nil || hc.Disable || len(hc.Test) == 0 {
		t.Fatalf("dynamodb has no healthcheck: %+v", hc)
	}
	if len(hc.Test) != 4 || hc.Test[0] != "CMD" || hc.Test[1] != "bash" || hc.Test[2] != "-c" {
		t.Fatalf("healthcheck test = %q, want [CMD bash -c SCRIPT] (bash is in the image; curl and wget may not be)", hc.Test)
	}
	script := hc.Test[3]
	for _, tool := range []string{"curl", "wget", "nc "} {
		if strings.Contains(script, tool) {
			t.Errorf("healthcheck %q uses %s, which the image may lack", script, tool)
		}
	}
	if !strings.Contains(script, "/dev/tcp/127.0.0.1/8000") || !strings.Contains(script, "400") {
		t.Fatalf("healthcheck %q does not check for HTTP 400 from 127.0.0.1:8000", script)
	}
	run := func(addr string) error {
		host, port, _ := strings.Cut(addr, ":")
		cmd := exec.Command("bash", "-c", strings.ReplaceAll(script, "/dev/tcp/127.0.0.1/8000", "/dev/tcp/"+host+"/"+port))
		return cmd.Run()
	}
	// Run the real command with bash against servers that answer like
	// DynamoDB Local (400 to an unsigned GET /) and unlike it.
	for _, tc := range []struct {
		status  int
		healthy bool
	}{{http.StatusBadRequest, true}, {http.StatusOK, false}, {http.StatusInternalServerError, false}} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tc.status)
			}))
			defer srv.Close()
			if err := run(srv.Listener.Addr().String()); (err == nil) != tc.healthy {
				t.Errorf("healthcheck with HTTP %d: err = %v, want healthy = %v", tc.status, err, tc.healthy)
			}
		})
	}
	t.Run("down", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		addr := srv.Listener.Addr().String()
		srv.Close()
		if err := run(addr); err == nil {
			t.Error("healthcheck passes when nothing listens")
		}
	})
}

func TestComposeLabWaitsForHealthyDynamoDB(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	dep, ok := s.DependsOn["dynamodb"]
	if !ok {
		t.Fatalf("lab does not depend on dynamodb: %+v", s.DependsOn)
	}
	if dep.Condition != types.ServiceConditionHealthy {
		t.Errorf("lab depends_on dynamodb condition = %q, want %q", dep.Condition, types.ServiceConditionHealthy)
	}
}

func TestComposeLabUsesTheDynamoDBService(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	v := s.Environment["AWS_ENDPOINT_URL_DYNAMODB"]
	if v == nil || *v != "http://dynamodb:8000" {
		t.Errorf("lab AWS_ENDPOINT_URL_DYNAMODB = %v, want http://dynamodb:8000", v)
	}
}

func TestComposeLabIsBuiltFromTheDockerfile(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	if s.Build == nil {
		t.Fatal("lab has no build section")
	}
	if s.Build.Context != root(t) {
		t.Errorf("lab build context = %q, want the repository root %q", s.Build.Context, root(t))
	}
	if s.Build.Dockerfile != "Dockerfile" {
		t.Errorf("lab dockerfile = %q, want Dockerfile", s.Build.Dockerfile)
	}
}

func TestComposePublishesPortsOnLoopbackOnly(t *testing.T) {
	p := loadCompose(t)
	published := 0
	for _, s := range p.Services {
		for _, port := range s.Ports {
			published++
			if port.HostIP != "127.0.0.1" {
				t.Errorf("service %s publishes %s:%d on host_ip %q, want 127.0.0.1", s.Name, port.Published, port.Target, port.HostIP)
			}
		}
		if s.NetworkMode == "host" {
			t.Errorf("service %s uses network_mode host", s.Name)
		}
	}
	lab := service(t, p, "lab")
	if !slices.ContainsFunc(lab.Ports, func(pc types.ServicePortConfig) bool { return pc.Target == 8888 }) {
		t.Errorf("lab does not publish JupyterLab's port 8888: %+v", lab.Ports)
	}
	if published == 0 {
		t.Error("no ports published at all")
	}
}

func TestComposeLabKeepsTheTokenOn(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	if v, ok := s.Environment["JUPYTER_TOKEN"]; ok && v != nil && *v == "" {
		t.Error("lab sets JUPYTER_TOKEN to the empty string, which turns authentication off")
	}
	for _, arg := range append(slices.Clone([]string(s.Command)), s.Entrypoint...) {
		if strings.Contains(arg, "token=''") || strings.Contains(arg, `token=""`) || strings.HasSuffix(arg, "token=") {
			t.Errorf("lab command disables the token: %q", arg)
		}
	}
}

// The lab serves the participants' copies in workspace/ (queuekit workspace prepare);
// the folder is in git (workspace/.gitkeep) so Docker does not create it as root.
func TestComposeLabMountsTheWorkspace(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	want := filepath.Join(root(t), "workspace")
	if _, err := os.Stat(filepath.Join(want, ".gitkeep")); err != nil {
		t.Errorf("workspace/.gitkeep: %v (the mounted folder must exist before docker compose up)", err)
	}
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source == want && v.Target == "/home/workshop/workshop/workspace" && !v.ReadOnly {
			return
		}
	}
	t.Errorf("lab does not bind-mount %s read-write onto /home/workshop/workshop/workspace: %+v", want, s.Volumes)
}

// dockerfile parses the Dockerfile with buildkit's parser (the one `docker build` uses).
func dockerfile(t *testing.T) []*parser.Node {
	t.Helper()
	f, err := os.Open(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := parser.Parse(f)
	if err != nil {
		t.Fatalf("Dockerfile does not parse: %v", err)
	}
	for _, w := range res.Warnings {
		t.Errorf("Dockerfile parser warning: %s", w.Short)
	}
	return res.AST.Children
}

func args(n *parser.Node) []string {
	var out []string
	for a := n.Next; a != nil; a = a.Next {
		out = append(out, a.Value)
	}
	return out
}

// pinnedGo is an exact Go release on a named Debian release, optionally with a digest.
var pinnedGo = regexp.MustCompile(`^golang:(\d+\.\d+)\.\d+-(bookworm|trixie)(@sha256:[0-9a-f]{64})?$`)

func TestDockerfileBaseIsPinnedToTheModulesGoVersion(t *testing.T) {
	var froms [][]string
	for _, n := range dockerfile(t) {
		if strings.EqualFold(n.Value, "from") {
			froms = append(froms, args(n))
		}
	}
	if len(froms) == 0 {
		t.Fatal("Dockerfile has no FROM")
	}
	data, err := os.ReadFile(filepath.Join(root(t), "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.ParseLax("go.mod", data, nil)
	if err != nil || mf.Go == nil {
		t.Fatalf("go.mod: %v", err)
	}
	goMinor := strings.Join(strings.Split(mf.Go.Version, ".")[:2], ".")
	for _, from := range froms {
		m := pinnedGo.FindStringSubmatch(from[0])
		if m == nil {
			t.Errorf("FROM %s is not a pinned golang:X.Y.Z-<debian release> image", from[0])
			continue
		}
		if m[1] != goMinor {
			t.Errorf("FROM %s is Go %s, but go.mod says go %s", from[0], m[1], mf.Go.Version)
		}
	}
}

// The image starts as root only for scripts/lab-entrypoint.sh, which drops to
// the owner of the mounted workspace before it runs CMD; every RUN of the
// launcher's setup (queuekit setup) runs as the workshop user.
func TestDockerfileRunsSetupAsANonRootUser(t *testing.T) {
	user := "root"
	var setupRuns, setupAsRoot int
	var cmd, entrypoint []string
	for _, n := range dockerfile(t) {
		switch strings.ToLower(n.Value) {
		case "user":
			user = args(n)[0]
		case "run":
			if strings.Contains(strings.Join(args(n), " "), "queuekit setup") {
				setupRuns++
				if isRoot(user) {
					setupAsRoot++
				}
			}
		case "cmd":
			cmd = args(n)
		case "entrypoint":
			entrypoint = args(n)
		}
	}
	if isRoot(user) && !slices.ContainsFunc(entrypoint, func(s string) bool { return strings.HasSuffix(s, "scripts/lab-entrypoint.sh") }) {
		t.Errorf("the final USER is %q and the ENTRYPOINT %q is not scripts/lab-entrypoint.sh, which drops root", user, entrypoint)
	}
	if setupRuns == 0 {
		t.Error("Dockerfile never RUNs queuekit setup (the same install steps as the host)")
	}
	if setupAsRoot > 0 {
		t.Errorf("%d RUN queuekit setup run as root; run them as the workshop user", setupAsRoot)
	}
	if len(cmd) != 2 || !strings.HasSuffix(cmd[0], "/queuekit") || cmd[1] != "workshop" {
		t.Errorf("CMD = %q, want it to start the launcher: queuekit workshop", cmd)
	}
	data, err := os.ReadFile(filepath.Join(root(t), "scripts", "lab-entrypoint.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "exec setpriv --reuid=") {
		t.Error("scripts/lab-entrypoint.sh does not drop privileges with setpriv")
	}
}

// TestDockerfileFetchesNoFrontend: a `# syntax=` directive makes BuildKit pull
// a frontend image from Docker Hub on every build, a fourth image that the
// compose file does not name (issue 17).
func TestDockerfileFetchesNoFrontend(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(data), "\n") {
		l := strings.ToLower(strings.ReplaceAll(line, " ", ""))
		if strings.HasPrefix(l, "#syntax=") || strings.HasPrefix(l, "#!syntax=") {
			t.Errorf("Dockerfile:%d: %q makes BuildKit pull a frontend image; remove it", i+1, line)
		}
		if !strings.HasPrefix(l, "#") {
			break // parser directives are only read before the first instruction or comment-free line
		}
	}
	var froms []string
	for _, n := range dockerfile(t) {
		if strings.EqualFold(n.Value, "from") {
			froms = append(froms, args(n)[0])
		}
	}
	if len(froms) != 1 {
		t.Errorf("Dockerfile has FROM %q; want one base image, the only image the lab's build pulls", froms)
	}
}

// TestComposeNeedsNoUIDFromTheUser: bash never exports UID, and as root a uid
// 0 user cannot be created, so the lab takes no uid build argument and no
// user: the entrypoint adopts the owner of ./workspace (issue 17).
func TestComposeNeedsNoUIDFromTheUser(t *testing.T) {
	s := service(t, loadCompose(t), "lab")
	if s.Build != nil && len(s.Build.Args) > 0 {
		t.Errorf("lab build args = %v; the image must not depend on the builder's uid", s.Build.Args)
	}
	if s.User != "" {
		t.Errorf("lab user = %q; leave it unset, the entrypoint adopts the workspace's owner", s.User)
	}
	data, err := os.ReadFile(filepath.Join(root(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "${UID") {
		t.Error("docker-compose.yml reads ${UID...}, which bash does not export")
	}
}

// The published ports follow DYNAMODB_PORT, SQS_PORT and LAB_PORT, still on
// 127.0.0.1, so a second stack (or a test) can avoid ports in use.
func TestComposePortsFollowTheirVariables(t *testing.T) {
	dir := root(t)
	opts, err := cli.NewProjectOptions([]string{filepath.Join(dir, "docker-compose.yml")},
		cli.WithWorkingDirectory(dir),
		cli.WithEnv([]string{"DYNAMODB_PORT=18000", "SQS_PORT=19324", "LAB_PORT=18888"}))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for svc, want := range map[string]string{"dynamodb": "18000", "sqs": "19324", "lab": "18888"} {
		s := service(t, p, svc)
		if len(s.Ports) != 1 || s.Ports[0].Published != want || s.Ports[0].HostIP != "127.0.0.1" {
			t.Errorf("%s ports = %+v, want 127.0.0.1:%s", svc, s.Ports, want)
		}
	}
	if v := service(t, p, "lab").Environment["LAB_PUBLIC_URL"]; v == nil || *v != "http://127.0.0.1:18888" {
		t.Errorf("lab LAB_PUBLIC_URL = %v, want http://127.0.0.1:18888", v)
	}
}

func isRoot(user string) bool {
	name, _, _ := strings.Cut(user, ":")
	return name == "root" || name == "0" || name == ""
}

func TestDockerfileCopiesTheScriptsItRuns(t *testing.T) {
	for _, p := range []string{"queuekit/cmd/queuekit/setup.go", "queuekit/cmd/queuekit/workshop.go", "scripts/lab-entrypoint.sh", "requirements.txt", "tools/go.mod"} {
		st, err := os.Stat(filepath.Join(root(t), p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if strings.HasSuffix(p, ".sh") && st.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", p)
		}
	}
}

// TestDockerfileCopiesWhatSetupReadsBeforeRunningIt: the first RUN of
// queuekit setup reads requirements.txt, tools/, jupyter/ (the JupyterLab
// settings it installs) and the launcher's source; each must be copied
// before it (the whole tree is).
func TestDockerfileCopiesWhatSetupReadsBeforeRunningIt(t *testing.T) {
	copied := map[string]bool{}
	for _, n := range dockerfile(t) {
		switch strings.ToLower(n.Value) {
		case "copy":
			a := args(n)
			for _, src := range a[:len(a)-1] {
				copied[strings.TrimPrefix(src, "./")] = true
			}
		case "run":
			if !strings.Contains(strings.Join(args(n), " "), "queuekit setup") {
				continue
			}
			if copied["."] {
				return // the whole tree is there
			}
			for _, want := range []string{"requirements.txt", "tools/", "queuekit/", "jupyter/"} {
				if !copied[want] {
					t.Errorf("the first RUN queuekit setup comes before COPY %s (copied so far: %v)", want, copied)
				}
			}
			return
		}
	}
	t.Fatal("Dockerfile never RUNs queuekit setup")
}

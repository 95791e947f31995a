package deploy

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// policyDoc is an IAM policy document as AWS documents its grammar (Version,
// Statement with Sid, Effect, Action, Resource); unknown fields fail.
type policyDoc struct {
	Version   string
	Statement []struct {
		Sid      string
		Effect   string
		Action   []string
		Resource json.RawMessage
	}
}

func loadPolicy(t *testing.T) policyDoc {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root(t), "deploy", "room", "participant-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var p policyDoc
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("participant-policy.json: %v", err)
	}
	return p
}

func resources(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	if err := json.Unmarshal(raw, &many); err != nil {
		t.Fatalf("Resource is neither a string nor a list: %s", raw)
	}
	return many
}

// arnMatch is IAM's resource matching: '*' any run of characters, '?' one,
// after the policy variable is substituted.
func arnMatch(pattern, podName, arn string) bool {
	p := strings.ReplaceAll(pattern, "${aws:PrincipalTag/kubernetes-pod-name}", podName)
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(p)) + "$"
	return regexp.MustCompile(re).MatchString(arn)
}

// allowed says whether the policy allows ACTION on ARN for a pod.
func allowed(t *testing.T, p policyDoc, podName, action, arn string) bool {
	for _, s := range p.Statement {
		for _, a := range s.Action {
			if a != action {
				continue
			}
			for _, r := range resources(t, s.Resource) {
				if arnMatch(r, podName, arn) {
					return true
				}
			}
		}
	}
	return false
}

// TestParticipantPolicy: the per-participant IAM policy (docs/room.md) allows
// only DynamoDB and SQS, only Allow statements, and every action on a table,
// index, stream or queue only under the participant's own prefix: the pod
// name EKS Pod Identity puts in the session tag kubernetes-pod-name, then "_",
// a character a Kubernetes pod name cannot hold, so user "al" never matches
// user "al-ice"'s resources.
func TestParticipantPolicy(t *testing.T) {
	p := loadPolicy(t)
	if p.Version != "2012-10-17" {
		t.Errorf("Version = %q, want 2012-10-17 (the one that knows policy variables)", p.Version)
	}
	list := map[string]bool{"dynamodb:ListTables": true, "dynamodb:ListStreams": true, "sqs:ListQueues": true}
	for _, s := range p.Statement {
		if s.Effect != "Allow" {
			t.Errorf("statement %s: Effect %q, want Allow only", s.Sid, s.Effect)
		}
		for _, a := range s.Action {
			if strings.Contains(a, "*") || !(strings.HasPrefix(a, "dynamodb:") || strings.HasPrefix(a, "sqs:")) {
				t.Errorf("statement %s: action %q: want named dynamodb: or sqs: actions only", s.Sid, a)
			}
			if list[a] {
				continue
			}
			for _, r := range resources(t, s.Resource) {
				if !strings.Contains(r, "${aws:PrincipalTag/kubernetes-pod-name}_*") {
					t.Errorf("statement %s: %s on %q is not limited to the participant's prefix", s.Sid, a, r)
				}
			}
		}
	}
	acct := "arn:aws:dynamodb:us-east-1:111122223333:table/"
	q := "arn:aws:sqs:us-east-1:111122223333:"
	cases := []struct {
		pod, action, arn string
		want             bool
	}{
		{"jupyter-alice", "dynamodb:PutItem", acct + "jupyter-alice_jobs", true},
		{"jupyter-alice", "dynamodb:Query", acct + "jupyter-alice_jobs/index/by-night", true},
		{"jupyter-alice", "dynamodb:GetRecords", acct + "jupyter-alice_timers/stream/2026-11-25T00:00:00.000", true},
		{"jupyter-alice", "sqs:SendMessage", q + "jupyter-alice_work", true},
		{"jupyter-alice", "dynamodb:PutItem", acct + "jupyter-bob_jobs", false},
		{"jupyter-alice", "dynamodb:DeleteTable", acct + "jupyter-bob_jobs", false},
		{"jupyter-alice", "sqs:ReceiveMessage", q + "jupyter-bob_work", false},
		{"jupyter-al", "dynamodb:Scan", acct + "jupyter-al-ice_jobs", false},
		{"jupyter-al", "sqs:PurgeQueue", q + "jupyter-al-ice_work", false},
		{"jupyter-alice", "dynamodb:Scan", acct + "jobs", false},
		{"jupyter-alice", "iam:CreateUser", "*", false},
	}
	for _, c := range cases {
		if got := allowed(t, p, c.pod, c.action, c.arn); got != c.want {
			t.Errorf("pod %s, %s on %s: allowed = %v, want %v", c.pod, c.action, c.arn, got, c.want)
		}
	}
}

// TestRoomValues: the Zero to JupyterHub values parse as YAML and say what
// the one-host room says: the same authenticator class, the image's start
// command, the workspace path, limits, and the culler on.
func TestRoomValues(t *testing.T) {
	dir := root(t)
	raw, err := os.ReadFile(filepath.Join(dir, "deploy", "room", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Hub struct {
			Config struct {
				JupyterHub struct {
					AuthenticatorClass string `yaml:"authenticator_class"`
				} `yaml:"JupyterHub"`
				Authenticator struct {
					AdminUsers []string `yaml:"admin_users"`
				} `yaml:"Authenticator"`
			}
		}
		Singleuser struct {
			Cmd      string
			UID      int               `yaml:"uid"`
			ExtraEnv map[string]string `yaml:"extraEnv"`
			Memory   struct{ Limit string }
			CPU      struct{ Limit float64 } `yaml:"cpu"`
			Storage  struct {
				HomeMountPath string `yaml:"homeMountPath"`
			}
			NetworkPolicy struct {
				Enabled          bool
				EgressAllowRules struct {
					CloudMetadataServer bool `yaml:"cloudMetadataServer"`
					PrivateIPs          bool `yaml:"privateIPs"`
				} `yaml:"egressAllowRules"`
			} `yaml:"networkPolicy"`
		}
		Cull struct {
			Enabled bool
			Timeout int
		}
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	auth, err := os.ReadFile(filepath.Join(dir, "room", "roomauth.py"))
	if err != nil {
		t.Fatal(err)
	}
	cls := v.Hub.Config.JupyterHub.AuthenticatorClass
	if cls != "roomauth.RoomAuthenticator" || !strings.Contains(string(auth), "class RoomAuthenticator(") {
		t.Errorf("authenticator_class = %q, want roomauth.RoomAuthenticator defined in room/roomauth.py", cls)
	}
	if len(v.Hub.Config.Authenticator.AdminUsers) != 1 || v.Hub.Config.Authenticator.AdminUsers[0] != "instructor" {
		t.Errorf("admin_users = %v, want [instructor]", v.Hub.Config.Authenticator.AdminUsers)
	}
	dockerfile, err := os.ReadFile(filepath.Join(dir, "room", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(dockerfile), `CMD ["`+v.Singleuser.Cmd+`"]`) {
		t.Errorf("singleuser.cmd %q is not room/Dockerfile's CMD", v.Singleuser.Cmd)
	}
	conf, err := os.ReadFile(filepath.Join(dir, "room", "jupyterhub_config.py"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(conf), `workspace = "`+v.Singleuser.Storage.HomeMountPath+`"`) {
		t.Errorf("singleuser.storage.homeMountPath %q differs from the room's workspace in room/jupyterhub_config.py", v.Singleuser.Storage.HomeMountPath)
	}
	if v.Singleuser.UID != 1000 || v.Singleuser.Memory.Limit == "" || v.Singleuser.CPU.Limit <= 0 {
		t.Errorf("singleuser uid %d, memory limit %q, cpu limit %v: want uid 1000 and both limits set", v.Singleuser.UID, v.Singleuser.Memory.Limit, v.Singleuser.CPU.Limit)
	}
	// KubeSpawner expands {pod_name} in its environment (KubeSpawner.get_env
	// expands the admin's environment with _expand_user_properties, which
	// knows pod_name); the policy's prefix is that pod name and "_", the tag
	// EKS Pod Identity sets (kubernetes-pod-name).
	if got, want := v.Singleuser.ExtraEnv["QUEUEKIT_NAME_PREFIX"], "{pod_name}_"; got != want {
		t.Errorf("singleuser.extraEnv.QUEUEKIT_NAME_PREFIX = %q, want %q: the prefix participant-policy.json allows", got, want)
	}
	pol, err := os.ReadFile(filepath.Join(dir, "deploy", "room", "participant-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(pol), "${aws:PrincipalTag/kubernetes-pod-name}_*") {
		t.Errorf("participant-policy.json does not scope names by ${aws:PrincipalTag/kubernetes-pod-name}_, the prefix values.yaml sets")
	}
	np := v.Singleuser.NetworkPolicy
	if !np.Enabled || np.EgressAllowRules.CloudMetadataServer || np.EgressAllowRules.PrivateIPs {
		t.Errorf("networkPolicy %+v: want enabled, no cloud metadata server, no private IPs (other pods)", np)
	}
	if !v.Cull.Enabled || v.Cull.Timeout <= 0 {
		t.Errorf("cull %+v: want the idle culler on with a timeout", v.Cull)
	}
}

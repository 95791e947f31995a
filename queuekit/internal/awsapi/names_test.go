package awsapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fanout"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
	"github.com/nightqueue/workshop/queuekit/internal/ddbtest"
	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// TestNamePrefixRule: the prefix is checked against the characters a
// DynamoDB table name and an SQS queue name both allow (a-z A-Z 0-9 _ -;
// "Naming rules", DynamoDB developer guide; CreateQueue's QueueName, SQS API
// reference) and a length, before any client exists.
func TestNamePrefixRule(t *testing.T) {
	for _, c := range []struct {
		prefix string
		ok     bool
	}{
		{"", true},
		{"jupyter-alice_", true},
		{"A-z_09", true},
		{"jupyter.alice_", false}, // '.' is a table's only
		{"jupyter alice_", false},
		{"jupyter/alice_", false},
		{"jupyter-alicé_", false},
		{strings.Repeat("a", awsapi.MaxNamePrefix), true},
		{strings.Repeat("a", awsapi.MaxNamePrefix+1), false},
	} {
		t.Setenv(awsapi.NamePrefixEnv, c.prefix)
		got, err := awsapi.NamePrefix()
		var bad *awsapi.NamePrefixError
		switch {
		case c.ok && (err != nil || got != c.prefix):
			t.Errorf("prefix %q: got %q, %v; want it accepted", c.prefix, got, err)
		case !c.ok && !errors.As(err, &bad):
			t.Errorf("prefix %q: got %q, %v; want a *NamePrefixError", c.prefix, got, err)
		case !c.ok && (!strings.Contains(err.Error(), awsapi.NamePrefixEnv) || strings.Contains(err.Error(), "\n")):
			t.Errorf("prefix %q: message %q: want one line naming %s", c.prefix, err, awsapi.NamePrefixEnv)
		}
		if !c.ok {
			if _, err := catalog.New(context.Background(), catalog.WithEndpoint("http://127.0.0.1:1")); !errors.As(err, new(*catalog.OptionError)) {
				t.Errorf("prefix %q: catalog.New: %v, want an *OptionError (bad input)", c.prefix, err)
			}
			if _, err := sqsqueue.New(context.Background(), sqsqueue.WithEndpoint("http://127.0.0.1:1")); !errors.As(err, &bad) {
				t.Errorf("prefix %q: sqsqueue.New: %v, want a *NamePrefixError", c.prefix, err)
			}
		}
	}
}

// participant is what one participant's code made, seen raw (no prefix).
type participant struct {
	pod            string
	tables, queues []string
	arns           []string // table, index and queue ARNs as the servers give them
}

// TestNamePrefixKeepsParticipantsApart runs the workshop's own table and
// queue code (catalog: create with its index, seed by BatchWriteItem, query,
// a companion table; queue: a work queue with its dead-letter queue under
// fanout's name) for two participants on one DynamoDB Local and one
// ElasticMQ, each under the prefix deploy/room/values.yaml gives a pod
// ("{pod_name}_"). Each participant's ListTables and ListQueues show only
// its own. Read back raw, every table and queue carries its participant's
// prefix, the two sets are disjoint, and deploy/room/participant-policy.json
// allows each name (its ARN as the server reports it) to its participant's
// pod and refuses it to the other's.
func TestNamePrefixKeepsParticipantsApart(t *testing.T) {
	ddbEP, sqsEP := ddbtest.Endpoint(t), sqstest.Endpoint(t)
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	run := hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	jobs, err := workload.Generate(workload.Config{Nights: 1})
	if err != nil {
		t.Fatal(err)
	}
	ps := []*participant{{pod: "jupyter-alice" + run}, {pod: "jupyter-al" + run}}
	for _, p := range ps {
		t.Setenv(awsapi.NamePrefixEnv, p.pod+"_")
		c, err := catalog.New(ctx, catalog.WithEndpoint(ddbEP), catalog.WithJobIndex())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CreateTable(ctx); err != nil {
			t.Fatalf("%s: create %s: %v", p.pod, c.Table(), err)
		}
		t.Cleanup(func() { _ = c.DeleteTable(context.Background()) })
		if _, err := c.Seed(ctx, jobs); err != nil {
			t.Fatalf("%s: seed: %v", p.pod, err)
		}
		night, _, err := c.QueryNight(ctx, jobs[0].BatchDate, "")
		if err != nil || len(night.Jobs) == 0 {
			t.Fatalf("%s: query the seeded night: %d jobs, %v", p.pod, len(night.Jobs), err)
		}
		side, err := c.DB().Open("workshop_timers_06")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := side.CreateAndWait(ctx, dynamo.Spec{Key: dynamo.Key{Partition: dynamo.S("pk")}}.Input()); err != nil {
			t.Fatalf("%s: create the companion table: %v", p.pod, err)
		}
		t.Cleanup(func() { _ = side.DeleteAndWait(context.Background()) })
		own, err := c.Client().ListTables(ctx, &dynamodb.ListTablesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{catalog.DefaultTable, "workshop_timers_06"}; !sameSet(own.TableNames, want) {
			t.Errorf("%s: ListTables through the prefix = %v, want only its own %v, without the prefix", p.pod, own.TableNames, want)
		}
		q, err := sqsqueue.New(ctx, sqsqueue.WithEndpoint(sqsEP))
		if err != nil {
			t.Fatal(err)
		}
		pair, err := q.CreateWithDLQ(ctx, fanout.QueueName("n"+run), 3, 30*time.Second)
		if err != nil {
			t.Fatalf("%s: create queues: %v", p.pod, err)
		}
		t.Cleanup(func() { _ = q.Delete(context.Background(), pair.Work); _ = q.Delete(context.Background(), pair.Dead) })
		if _, err := q.Open(ctx, fanout.QueueName("n"+run)); err != nil {
			t.Fatalf("%s: open its own queue by name: %v", p.pod, err)
		}
		lq, err := q.SQS().ListQueues(ctx, &sqs.ListQueuesInput{})
		if err != nil {
			t.Fatal(err)
		}
		if len(lq.QueueUrls) != 2 || slices.ContainsFunc(lq.QueueUrls, func(u string) bool { return !strings.Contains(u, "/"+p.pod+"_") }) {
			t.Errorf("%s: ListQueues through the prefix = %v, want only its own two queues", p.pod, lq.QueueUrls)
		}
	}

	t.Setenv(awsapi.NamePrefixEnv, "")
	raw, err := catalog.New(ctx, catalog.WithEndpoint(ddbEP))
	if err != nil {
		t.Fatal(err)
	}
	rq, err := sqsqueue.New(ctx, sqsqueue.WithEndpoint(sqsEP))
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for pg := dynamodb.NewListTablesPaginator(raw.Client(), &dynamodb.ListTablesInput{}); pg.HasMorePages(); {
		out, err := pg.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, out.TableNames...)
	}
	for _, p := range ps {
		for _, n := range tables {
			if !strings.HasPrefix(n, p.pod+"_") {
				continue
			}
			p.tables = append(p.tables, n)
			d, err := raw.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(n)})
			if err != nil {
				t.Fatal(err)
			}
			arn := aws.ToString(d.Table.TableArn)
			p.arns = append(p.arns, arn)
			for _, ix := range d.Table.GlobalSecondaryIndexes {
				p.arns = append(p.arns, arn+"/index/"+aws.ToString(ix.IndexName))
			}
		}
		out, err := rq.SQS().ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(p.pod + "_")})
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range out.QueueUrls {
			a, err := rq.SQS().GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
			if err != nil {
				t.Fatal(err)
			}
			arn := a.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
			p.queues = append(p.queues, arn[strings.LastIndex(arn, ":")+1:])
			p.arns = append(p.arns, arn)
		}
		wantT := []string{p.pod + "_" + catalog.DefaultTable, p.pod + "_workshop_timers_06"}
		wantQ := []string{p.pod + "_" + fanout.QueueName("n"+run), p.pod + "_" + fanout.QueueName("n"+run) + "-dlq"}
		if !sameSet(p.tables, wantT) || !sameSet(p.queues, wantQ) {
			t.Errorf("%s: raw tables %v and queues %v, want %v and %v", p.pod, p.tables, p.queues, wantT, wantQ)
		}
		if len(p.arns) < 5 { // two tables, the job index, two queues
			t.Errorf("%s: %d ARNs %v, want the two tables, the job index and two queues", p.pod, len(p.arns), p.arns)
		}
	}
	if slices.ContainsFunc(ps[0].tables, func(n string) bool { return slices.Contains(ps[1].tables, n) }) ||
		slices.ContainsFunc(ps[0].queues, func(n string) bool { return slices.Contains(ps[1].queues, n) }) {
		t.Errorf("the participants share a name: %v %v and %v %v", ps[0].tables, ps[0].queues, ps[1].tables, ps[1].queues)
	}

	pol := loadPolicy(t)
	for i, p := range ps {
		other := ps[1-i]
		for _, arn := range p.arns {
			action := "dynamodb:Query"
			if strings.HasPrefix(arn, "arn:aws:sqs:") {
				action = "sqs:ReceiveMessage"
			}
			if pol.allows(other.pod, action, arn) {
				t.Errorf("policy lets pod %s %s on %s, a resource of pod %s", other.pod, action, arn, p.pod)
			}
			for _, a := range pol.actionsFor(arn) {
				if !pol.allows(p.pod, a, arn) {
					t.Errorf("policy refuses pod %s %s on its own %s", p.pod, a, arn)
				}
			}
		}
	}
}

// policy is deploy/room/participant-policy.json.
type policy struct {
	Statement []struct {
		Sid      string
		Effect   string
		Action   []string
		Resource json.RawMessage
	}
}

func loadPolicy(t *testing.T) policy {
	t.Helper()
	root, err := ddbtest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "room", "participant-policy.json"))
	if err != nil {
		t.Fatal(err)
	}
	var p policy
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("participant-policy.json: %v", err)
	}
	return p
}

func (p policy) resources(s int) []string {
	var one string
	if json.Unmarshal(p.Statement[s].Resource, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(p.Statement[s].Resource, &many)
	return many
}

// match is IAM's resource matching ('*' any run, '?' one character) after
// the session tag kubernetes-pod-name is substituted.
func match(pattern, pod, arn string) bool {
	pat := strings.ReplaceAll(pattern, "${aws:PrincipalTag/kubernetes-pod-name}", pod)
	re := "^" + strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pat)) + "$"
	return regexp.MustCompile(re).MatchString(arn)
}

// allows says whether an Allow statement names action on a resource
// pattern that matches arn for pod (the policy has no Deny).
func (p policy) allows(pod, action, arn string) bool {
	for i, s := range p.Statement {
		if s.Effect == "Allow" && slices.Contains(s.Action, action) && slices.ContainsFunc(p.resources(i), func(r string) bool { return match(r, pod, arn) }) {
			return true
		}
	}
	return false
}

// actionsFor lists the policy's actions of arn's service, other than the
// account-wide listings.
func (p policy) actionsFor(arn string) []string {
	svc := strings.Split(arn, ":")[2] + ":"
	var out []string
	for _, s := range p.Statement {
		for _, a := range s.Action {
			if strings.HasPrefix(a, svc) && !strings.HasPrefix(a, svc+"List") {
				out = append(out, a)
			}
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

package awsapi

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
)

// The messages are the ones the catalog and the SQS client printed before
// they shared one type: the CLI's output is a contract.
func TestErrorMessagesNameTheServiceEndpointAndFix(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"dynamodb wrong server", &WrongServerError{Service: DynamoDB, Endpoint: "http://localhost:1", Status: 404},
			"the server at http://localhost:1 answers but is not DynamoDB (HTTP 404, not a DynamoDB reply): point --endpoint / AWS_ENDPOINT_URL_DYNAMODB at DynamoDB Local (start DynamoDB Local with `make dynamodb` (or `queuekit servers start dynamodb`))"},
		{"sqs wrong server", &WrongServerError{Service: SQS, Endpoint: "http://localhost:2", Status: 200},
			"the server at http://localhost:2 answers but is not SQS (HTTP 200, not an SQS reply): point --sqs-endpoint / AWS_ENDPOINT_URL_SQS at ElasticMQ; start ElasticMQ with `make sqs` (or `queuekit servers start sqs`) and export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9324"},
		{"wrong server, status unknown", &WrongServerError{Service: SQS, Endpoint: "http://sqs:9324"},
			"the server at http://sqs:9324 answers but is not SQS: point --sqs-endpoint / AWS_ENDPOINT_URL_SQS at ElasticMQ; start ElasticMQ with `make sqs` (or `queuekit servers start sqs`) and export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9324"},
		{"dynamodb local unreachable", &UnreachableError{Service: DynamoDB, Endpoint: "http://localhost:1", Reason: "connection refused", Local: true},
			"DynamoDB Local at http://localhost:1 is unreachable (connection refused): start DynamoDB Local with `make dynamodb` (or `queuekit servers start dynamodb`), or point --endpoint / AWS_ENDPOINT_URL_DYNAMODB at a running one"},
		{"dynamodb aws unreachable", &UnreachableError{Service: DynamoDB, Endpoint: "the AWS default endpoint", Reason: "unknown host x"},
			"DynamoDB at the AWS default endpoint is unreachable (unknown host x): check the network, AWS_REGION and AWS_ENDPOINT_URL_DYNAMODB; for the workshop start DynamoDB Local with `make dynamodb` (or `queuekit servers start dynamodb`)"},
		{"sqs local unreachable", &UnreachableError{Service: SQS, Endpoint: "http://127.0.0.1:1", Reason: "connection refused", Local: true},
			"SQS at http://127.0.0.1:1 is unreachable (connection refused): start ElasticMQ with `make sqs` (or `queuekit servers start sqs`) and export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9324"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestExplainTellsNothingAnswersFromOtherErrors(t *testing.T) {
	c := &Conn{Service: SQS, URL: "http://127.0.0.1:1", Local: true}
	refused := &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
	var un *UnreachableError
	if err := c.Explain(refused); !errors.As(err, &un) || un.Reason != "connection refused" || un.Service.Name != "SQS" || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("Explain(connection refused) = %#v; want an SQS UnreachableError wrapping ECONNREFUSED", err)
	}
	other := errors.New("AccessDenied")
	if err := c.Explain(other); err != other {
		t.Errorf("Explain(%v) = %v; want it unchanged", other, err)
	}
	if err := c.Explain(nil); err != nil {
		t.Errorf("Explain(nil) = %v; want nil", err)
	}
}

func TestLoadGivesLocalEndpointsDummyCredentialsAndTheLocalRegion(t *testing.T) {
	t.Setenv(SQSEnv, "http://127.0.0.1:9324")
	c, err := Load(context.Background(), SQS, Endpoint{})
	if err != nil {
		t.Fatal(err)
	}
	if c.URL != "http://127.0.0.1:9324" || !c.Local || c.Config.Region != LocalRegion || c.Where() != c.URL {
		t.Errorf("Load from %s = URL %q local %v region %q; want the variable's URL, local, %s", SQSEnv, c.URL, c.Local, c.Config.Region, LocalRegion)
	}
	creds, err := c.Config.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "local" {
		t.Errorf("credentials = %q, %v; want the static dummy ones", creds.AccessKeyID, err)
	}
	if _, err := Load(context.Background(), DynamoDB, Endpoint{URL: "localhost:8000"}); !errors.Is(err, ErrNotURL) {
		t.Errorf("Load(localhost:8000) = %v; want ErrNotURL (no scheme)", err)
	}
}

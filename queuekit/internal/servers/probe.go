package servers

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
)

// answer is what a probe found at an endpoint.
type answer int

const (
	down    answer = iota // nothing accepts connections
	answers               // the server's protocol answers
	wrong                 // something else answers
)

// awsConfig is a configuration for a local endpoint: dummy credentials, no
// retries, a short timeout.
func awsConfig(ep string) aws.Config {
	return aws.Config{
		Region:       awsapi.LocalRegion,
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
		BaseEndpoint: aws.String(ep),
		HTTPClient:   &http.Client{Timeout: 3 * time.Second},
		Retryer:      func() aws.Retryer { return aws.NopRetryer{} },
	}
}

// listTables asks ep for one table name.
func listTables(ctx context.Context, ep string) error {
	_, err := dynamodb.NewFromConfig(awsConfig(ep)).ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
	return err
}

// listQueues asks ep for its queues' URLs.
func listQueues(ctx context.Context, ep string) ([]string, error) {
	out, err := sqs.NewFromConfig(awsConfig(ep)).ListQueues(ctx, &sqs.ListQueuesInput{})
	if err != nil {
		return nil, err
	}
	return out.QueueUrls, nil
}

// classify turns a probe's error into an answer and a short reason.
func classify(err error) (answer, string) {
	if err == nil {
		return answers, ""
	}
	if r := awsapi.UnreachableReason(err); r != "" {
		return down, r
	}
	return wrong, "it does not answer like one"
}

// probe checks ep through the AWS layer: ListTables for DynamoDB and the
// limits layer, ListQueues for SQS. The SQS port of a supervisor of this
// checkout is checked by a TCP connection only, so that a status or a start
// never starts ElasticMQ.
func (s *server) probe(ctx context.Context, ep string) (answer, string) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.name == SQS {
		if ep == s.endpoint() && s.supervisorListening(ep) {
			return answers, ""
		}
		_, err := listQueues(ctx, ep)
		return classify(err)
	}
	return classify(listTables(ctx, ep))
}

// supervisorListening reports whether this checkout's SQS supervisor holds
// its pid file and something accepts connections at ep.
func (s *server) supervisorListening(ep string) bool {
	if !s.supervisorReady() {
		return false
	}
	u, err := url.Parse(ep)
	if err != nil {
		return false
	}
	c, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Package awsapi is the project's one layer of AWS access shared by every
// service: where an endpoint is (Local or AWS) and how its configuration is
// loaded, and how a failed call is told apart (nothing answers, another
// server answers). It imports no service client, so the SQS code can use it
// without pulling in DynamoDB; the DynamoDB part (tables, calls, batch
// writes, paging, Streams) is its subpackage dynamo.
//
// A local endpoint (localhost, a loopback address, or a one-label host such
// as the docker-compose service "dynamodb-local") gets static dummy
// credentials and LocalRegion, because DynamoDB Local and ElasticMQ accept
// any; any other endpoint, or none, goes through the standard AWS
// configuration chain (AWS_PROFILE, AWS_REGION, ...), so the dummy
// credentials never reach AWS.
package awsapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
)

// LocalRegion is the region used with a local endpoint when none is given.
// DynamoDB Local with -sharedDb keeps one database whatever the region.
const LocalRegion = "us-east-1"

// The standard variables naming the endpoints, and how to start the local
// servers.
const (
	DynamoDBEnv       = "AWS_ENDPOINT_URL_DYNAMODB"
	DynamoDBStartHint = "start DynamoDB Local with `make dynamodb` (or `queuekit servers start dynamodb`)"
	SQSEnv            = "AWS_ENDPOINT_URL_SQS"
	SQSStartHint      = "start ElasticMQ with `make sqs` (or `queuekit servers start sqs`) and export AWS_ENDPOINT_URL_SQS=http://127.0.0.1:9324"
)

// Service describes a service for the messages of UnreachableError and
// WrongServerError: its name, its local server's, and what a person does
// when either error happens.
type Service struct {
	// Name is the service ("DynamoDB"); LocalName its local server
	// ("DynamoDB Local"), used when the endpoint is local.
	Name, LocalName string
	// Env is the standard variable naming its endpoint.
	Env string
	// Reply completes "not ...": "a DynamoDB reply".
	Reply string
	// UnreachableFix and UnreachableLocalFix say what to do when nothing
	// answers at an AWS or a local endpoint.
	UnreachableFix, UnreachableLocalFix string
	// WrongServerFix says what to do when another server answers.
	WrongServerFix string
}

// DynamoDB and SQS are the services of the workshop.
var (
	DynamoDB = Service{
		Name: "DynamoDB", LocalName: "DynamoDB Local", Env: DynamoDBEnv, Reply: "a DynamoDB reply",
		UnreachableFix:      "check the network, AWS_REGION and " + DynamoDBEnv + "; for the workshop " + DynamoDBStartHint,
		UnreachableLocalFix: DynamoDBStartHint + ", or point --endpoint / " + DynamoDBEnv + " at a running one",
		WrongServerFix:      "point --endpoint / " + DynamoDBEnv + " at DynamoDB Local (" + DynamoDBStartHint + ")",
	}
	SQS = Service{
		Name: "SQS", LocalName: "SQS", Env: SQSEnv, Reply: "an SQS reply",
		UnreachableFix:      SQSStartHint,
		UnreachableLocalFix: SQSStartHint,
		WrongServerFix:      "point --sqs-endpoint / " + SQSEnv + " at ElasticMQ; " + SQSStartHint,
	}
)

// UnreachableError says that nothing answered at a service's endpoint. Its
// message is one line naming the endpoint and how to start the right server.
type UnreachableError struct {
	Service  Service
	Endpoint string // the URL, or "the AWS default endpoint"
	Reason   string // short cause, e.g. "connection refused"
	Local    bool   // whether the endpoint is a local server
	Err      error  // the SDK error
}

func (e *UnreachableError) Error() string {
	s := e.service()
	name, fix := s.Name, s.UnreachableFix
	if e.Local {
		name, fix = s.LocalName, s.UnreachableLocalFix
	}
	return fmt.Sprintf("%s at %s is unreachable (%s): %s", name, e.Endpoint, e.Reason, fix)
}

// Unwrap returns the SDK error.
func (e *UnreachableError) Unwrap() error { return e.Err }

func (e *UnreachableError) service() Service {
	if e.Service.Name == "" {
		return DynamoDB
	}
	return e.Service
}

// WrongServerError says that something answered at a service's endpoint,
// but not as that service does (for example a web server answering HTML):
// the endpoint names another server. Its message is one line naming the
// endpoint and the variable (or flag) to fix.
type WrongServerError struct {
	Service  Service
	Endpoint string // the URL, or "the AWS default endpoint"
	Status   int    // the HTTP status of the answer, 0 if unknown
	Err      error  // the SDK error
}

func (e *WrongServerError) Error() string {
	s := e.Service
	if s.Name == "" {
		s = DynamoDB
	}
	status := ""
	if e.Status != 0 {
		status = fmt.Sprintf(" (HTTP %d, not %s)", e.Status, s.Reply)
	}
	return fmt.Sprintf("the server at %s answers but is not %s%s: %s", e.Endpoint, s.Name, status, s.WrongServerFix)
}

// Unwrap returns the SDK error.
func (e *WrongServerError) Unwrap() error { return e.Err }

// NotTheServer reports whether err is an answer the SDK could not read as
// its service's reply (a deserialization failure: HTML, plain text, another
// protocol) or a readable reply that lacks what the service always sends
// (*NotAnAnswerError: any JSON from a server that is not the service), and
// the HTTP status of that answer. It tells "another server
// answers here" from "nothing answers" (UnreachableReason).
func NotTheServer(err error) (status int, ok bool) {
	var na *NotAnAnswerError
	if errors.As(err, &na) {
		return na.Status, true
	}
	var de *smithy.DeserializationError
	if !errors.As(err, &de) {
		return 0, false
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	return status, true
}

// UnreachableReason returns a short reason ("connection refused", "unknown
// host x", ...) when err is a failure to connect to a server, else "".
func UnreachableReason(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return "unknown host " + dns.Name
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "no route to host"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "cannot connect: " + op.Err.Error()
	}
	return ""
}

// Explain turns err into an *UnreachableError when nothing answered at the
// endpoint and into a *WrongServerError when another server answered;
// other errors (nil too) are returned unchanged.
func (c *Conn) Explain(err error) error {
	if err == nil {
		return nil
	}
	if status, ok := NotTheServer(err); ok {
		return &WrongServerError{Service: c.Service, Endpoint: c.Where(), Status: status, Err: err}
	}
	if r := UnreachableReason(err); r != "" {
		return &UnreachableError{Service: c.Service, Endpoint: c.Where(), Reason: r, Local: c.Local, Err: err}
	}
	return err
}

// IsLocalEndpoint reports whether endpoint is a local server (DynamoDB
// Local, ElasticMQ): its host is localhost, a loopback or unspecified
// address, or a name without dots (a docker-compose service such as
// dynamodb-local). Only such endpoints get the dummy credentials.
func IsLocalEndpoint(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "" {
		return false
	}
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback() || ip.IsUnspecified()
	}
	return !strings.Contains(host, ".")
}

// ErrNotURL is wrapped by Load when the endpoint is not a URL with a scheme
// and a host.
var ErrNotURL = errors.New("not a URL")

// Endpoint says where a service is: URL "" means the service's variable
// (Service.Env) if set, else the AWS default for the region.
type Endpoint struct {
	URL     string
	Region  string // overrides the chain's; default LocalRegion for a local endpoint
	Profile string // a shared-config profile (AWS only)
}

// Conn is the AWS configuration for one service at one endpoint, from
// which that service's client (and, for DynamoDB, the Streams client) is
// built.
type Conn struct {
	Service Service
	Config  aws.Config
	URL     string // as configured; "" means the AWS default endpoint
	Local   bool   // whether URL is a local endpoint
	// Prefix is QUEUEKIT_NAME_PREFIX (NamePrefixEnv), checked; every
	// client built from Config puts its table and queue names under it.
	Prefix string
}

// Load resolves the endpoint of service s and loads its configuration: for
// a local endpoint a static one (dummy credentials, the region or
// LocalRegion) that reads no shared files; for any other the standard
// chain with the region and profile given. An endpoint that is not a URL
// gives an error wrapping ErrNotURL; a chain that cannot be loaded, the
// SDK's error, for the caller to word. A malformed QUEUEKIT_NAME_PREFIX
// gives a *NamePrefixError before anything else is read.
func Load(ctx context.Context, s Service, e Endpoint) (*Conn, error) {
	prefix, err := NamePrefix()
	if err != nil {
		return nil, err
	}
	c := &Conn{Service: s, URL: e.URL, Prefix: prefix}
	if c.URL == "" {
		c.URL = os.Getenv(s.Env)
	}
	if c.URL != "" {
		u, err := url.Parse(c.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("%s endpoint %q: %w", s.Name, c.URL, ErrNotURL)
		}
		c.Local = IsLocalEndpoint(c.URL)
	}
	if c.Local {
		region := e.Region
		if region == "" {
			region = LocalRegion
		}
		// The local servers accept any credentials; these never leave a local endpoint.
		c.Config = aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}
		addNames(&c.Config, prefix)
		return c, nil
	}
	var load []func(*config.LoadOptions) error
	if e.Region != "" {
		load = append(load, config.WithRegion(e.Region))
	}
	if e.Profile != "" {
		load = append(load, config.WithSharedConfigProfile(e.Profile))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, err
	}
	c.Config = cfg
	addNames(&c.Config, prefix)
	return c, nil
}

// BaseEndpoint is the endpoint to set on a client's options: the URL, or
// nil for the AWS default.
func (c *Conn) BaseEndpoint() *string {
	if c.URL == "" {
		return nil
	}
	return aws.String(c.URL)
}

// Where names the endpoint for messages.
func (c *Conn) Where() string {
	if c.URL != "" {
		return c.URL
	}
	return "the AWS default endpoint"
}

package sqsqueue_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/internal/sqstest"
	"github.com/nightqueue/workshop/queuekit/sqsqueue"
)

// A server that answers every request with 200 and JSON the SDK can read is
// not SQS: Ping and Create say so in one line naming the endpoint and the
// variable to fix, instead of handing back a queue without a URL.
func TestJSONServerIsNotSQS(t *testing.T) {
	for _, body := range []string{`{}`, `{"hello":"world"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, body)
		}))
		defer srv.Close()
		c, err := sqsqueue.New(context.Background(), sqsqueue.WithEndpoint(srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		for op, call := range map[string]func() error{
			"Ping":   func() error { return c.Ping(context.Background()) },
			"Create": func() error { _, err := c.Create(context.Background(), "q", nil); return err },
		} {
			err := call()
			var we *sqsqueue.WrongServerError
			if !errors.As(err, &we) {
				t.Fatalf("%s on a server answering %s = %v, want a WrongServerError", op, body, err)
			}
			for _, want := range []string{"the server at " + srv.URL + " answers but is not SQS", "AWS_ENDPOINT_URL_SQS"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %q lacks %q", op, err, want)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: %q is more than one line", op, err)
			}
		}
	}
}

// ElasticMQ is SQS for this check: Ping passes against the real server (it
// answers QueueDoesNotExist for the probe's queue, the expected answer).
func TestPingPassesOnElasticMQ(t *testing.T) {
	c, err := sqsqueue.New(context.Background(), sqsqueue.WithEndpoint(sqstest.Endpoint(t)))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Fatalf("Ping on ElasticMQ = %v", err)
	}
}

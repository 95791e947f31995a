package limits_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// Nothing at the target when the layer starts: the project's one-line
// unreachable error, naming DynamoDB Local's endpoint and how to start it.
func TestStartWithNoTargetSaysUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // a port nothing answers on
	_, err := limits.Start(context.Background(), url, "")
	var ue *awsapi.UnreachableError
	if !errors.As(err, &ue) || err.Error() != "DynamoDB Local at "+url+" is unreachable (connection refused): "+awsapi.DynamoDB.UnreachableLocalFix {
		t.Fatalf("got %v", err)
	}
}

// DynamoDB Local gone behind a running layer: the layer closes the
// client's connection, so the client's error is the same one line it
// gives when nothing answers at its endpoint (here the layer's).
func TestTargetGoneBehindTheLayer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(400) }))
	s, err := limits.Start(context.Background(), srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	srv.Close()
	c, err := catalog.New(context.Background(), catalog.WithEndpoint(s.URL), catalog.WithTable("gone_behind"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.CreateTable(context.Background())
	var ue *awsapi.UnreachableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "DynamoDB Local at "+s.URL+" is unreachable (") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v; want the one-line unreachable error naming %s", err, s.URL)
	}
	t.Log(err)
}

package ddbtest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// An HTTP server that is not DynamoDB (here one answering every request with
// 400, as DynamoDB Local answers an unsigned GET /) must not count as the
// tests' server; DynamoDB Local itself must.
func TestAnswersMeansDynamoDB(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusBadRequest) }))
	defer srv.Close()
	if answers(srv.URL) {
		t.Fatal("a plain HTTP server answering 400 counted as DynamoDB")
	}
	if ep := Endpoint(t); !answers(ep) {
		t.Fatalf("DynamoDB Local at %s does not count as DynamoDB", ep)
	}
}

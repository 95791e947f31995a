package dynamo

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/internal/awsapi"
)

// refusing is a table whose endpoint is a loopback port nobody listens on
// (a real connection refused), with the ride-out retryer of 2 tries.
func refusing(t *testing.T) *Table {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	_ = l.Close() // nothing listens there any more
	conn := &awsapi.Conn{Service: awsapi.DynamoDB, URL: url, Local: true, Config: aws.Config{Region: "us-east-1",
		Credentials: aws.AnonymousCredentials{}}}
	return New(conn, "rideout", Options{CallTimeout: 5 * time.Second, RideOut: &RideOut{Attempts: 2}})
}

// A caller riding out an endpoint that refuses every connection calls
// again with backoff for the bound, then gives up with one line naming the
// caller, how long nothing answered, the bound, the cause and what to do;
// a call that is answered (a refusal of a condition is an answer) ends the
// outage at once.
func TestOutageRidesOutUntilItsBound(t *testing.T) {
	tb := refusing(t)
	o := tb.Outage(700*time.Millisecond, "worker w1 of night 2027-01-01", "start a worker again")
	calls := 0
	began := time.Now()
	err := o.Do(context.Background(), func(ctx context.Context) error {
		calls++
		_, err := Call(ctx, tb, func(ctx context.Context) (*dynamodb.ListTablesOutput, error) {
			return tb.Client().ListTables(ctx, &dynamodb.ListTablesInput{})
		})
		return err
	})
	took := time.Since(began)
	var gave *OutageError
	if !errors.As(err, &gave) {
		t.Fatalf("after %d calls in %s: %v; want an *OutageError", calls, took, err)
	}
	msg := err.Error()
	for _, want := range []string{"worker w1 of night 2027-01-01", "no answer from DynamoDB at " + tb.Where(), "longer than the 700ms it rides out",
		"connection refused", "start a worker again"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("message %q is more than one line", msg)
	}
	if calls < 2 || took < 700*time.Millisecond || took > 5*time.Second {
		t.Errorf("%d calls in %s; want at least 2 over the 700 ms bound, and giving up soon after it", calls, took)
	}
	if NoAnswer(err) {
		t.Error("an outage already given up on is read as no answer: the next rider would ride it again")
	}
	t.Logf("%d calls in %s: %s", calls, took.Round(time.Millisecond), msg)

	// Answered after two unanswered calls: nil, and the outage is over.
	calls = 0
	err = o.Do(context.Background(), func(ctx context.Context) error {
		calls++
		if calls < 3 {
			return &awsapi.UnreachableError{Reason: "connection reset"}
		}
		return nil
	})
	if err != nil || calls != 3 || o.Lasted() != 0 {
		t.Fatalf("answered at the third call: %v after %d calls, outage %s; want nil after 3 and no outage", err, calls, o.Lasted())
	}
	// A refusal is an answer: returned at once, never sent again.
	calls = 0
	refused := &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed")}
	if err := o.Do(context.Background(), func(context.Context) error { calls++; return refused }); !errors.Is(err, refused) || calls != 1 {
		t.Fatalf("a refusal: %v after %d calls; want it returned after 1", err, calls)
	}
	// A cancelled caller stops riding at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := o.Ride(ctx, &awsapi.UnreachableError{Reason: "connection refused"}); err == nil {
		t.Fatal("a cancelled caller was told to call again")
	}
}

// A caller whose own calls get no answer while other calls of its process
// are answered (a night worker whose claim loop's reads fail on a busy
// machine while its jobs' heartbeats get through) is not cut off: the
// outage is timed from the last answer Answered reports. Once those
// answers stop too, it gives up a bound after the last one.
func TestOutageIsTimedFromTheProcesssLastAnswer(t *testing.T) {
	tb := refusing(t)
	var last time.Time // another goroutine's last answer (set here between calls)
	o := tb.Outage(300*time.Millisecond, "worker w1 of night 2027-01-01", "start a worker again")
	o.Answered = func() time.Time { return last }
	unanswered := &awsapi.UnreachableError{Reason: "connection reset"}
	began := time.Now()
	calls := 0
	err := o.Do(context.Background(), func(context.Context) error {
		calls++
		if time.Since(began) < time.Second {
			last = time.Now() // heartbeats still answered for the first second
		}
		return unanswered
	})
	took := time.Since(began)
	var gave *OutageError
	if !errors.As(err, &gave) {
		t.Fatalf("after %d calls in %s: %v; want an *OutageError", calls, took, err)
	}
	// Never cut off while answers came (for about 1 s, over three bounds),
	// then cut off one bound after the last answer.
	answered := last.Sub(began)
	if answered < 600*time.Millisecond || took < answered+300*time.Millisecond || took > answered+2*time.Second {
		t.Errorf("answers for %s, gave up after %s (%d calls); want answers for about 1 s, and giving up 300 ms (the bound) after the last, and soon after", answered, took, calls)
	}
	if gave.Lasted < 300*time.Millisecond || gave.Lasted > 2*time.Second {
		t.Errorf("outage reported as %s; want it timed from the last answer (about the 300 ms bound)", gave.Lasted)
	}
}

// A throttle is an answer: the ride-out retryer backs it off as the SDK's
// standard retryer does (full jitter over up to 2^attempt s, at most 20 s),
// not by the short backoff of calls that got no answer (at most Max, 1 s).
// Re-sending a throttled fleet's writes within a second made the limits
// layer's fleet sweep (queuekit/lab TestRunFleetSweep) write 5 index units
// a job instead of 4. At the third attempt the throttle's delay is uniform
// over [0, 8 s): all of 200 draws at or under 1 s has probability
// (1/8)^200, so the test cannot fail by chance; a reset is never over 1 s.
func TestRideOutBacksOffThrottlesAsTheSDKDoes(t *testing.T) {
	r := RideOut{}.Retryer()
	throttle := &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	reset := errors.New("connection reset by peer")
	var over time.Duration
	for range 200 {
		d, err := r.RetryDelay(3, throttle)
		if err != nil {
			t.Fatal(err)
		}
		if d > 20*time.Second {
			t.Fatalf("throttle delay %s, want at most 20 s", d)
		}
		over = max(over, d)
		if d, err = r.RetryDelay(3, reset); err != nil || d > DefaultRideMax {
			t.Fatalf("reset delay %s (%v), want at most %s", d, err, DefaultRideMax)
		}
	}
	if over <= time.Second {
		t.Fatalf("the longest of 200 throttle delays at the third attempt was %s: throttles get the short backoff of calls with no answer", over)
	}
}

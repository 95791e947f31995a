package fence

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

var placeholder = regexp.MustCompile(`[#:][0-9]+`)

func reason(code string, item map[string]types.AttributeValue) types.CancellationReason {
	return types.CancellationReason{Code: aws.String(code), Item: item}
}

func image(holder string, token int) map[string]types.AttributeValue {
	it := map[string]types.AttributeValue{Default.Token: &types.AttributeValueMemberN{Value: fmt.Sprint(token)}}
	if holder != "" {
		it[Default.Holder] = &types.AttributeValueMemberS{Value: holder}
	}
	return it
}

// Refused and Check tell a write refused by a condition (one item, or the
// given items of a transaction) from everything else, and a refusal by the
// fence from a refusal by another of the caller's conditions when the old
// image says so.
func TestRefusedAndCheck(t *testing.T) {
	h := Hold{Holder: "a", Token: 3}
	wrapped := func(err error) error { return fmt.Errorf("end attempt: %w", err) }
	tce := func(rs ...types.CancellationReason) error {
		return wrapped(&types.TransactionCanceledException{CancellationReasons: rs})
	}
	cases := []struct {
		name    string
		err     error
		items   []int
		refused bool
		fenced  bool
		conflct bool
	}{
		{"nil", nil, nil, false, false, false},
		{"other", errors.New("boom"), nil, false, false, false},
		{"ccf, no image", wrapped(&types.ConditionalCheckFailedException{}), nil, true, true, false},
		{"ccf, image of another holder", wrapped(&types.ConditionalCheckFailedException{Item: image("b", 4)}), nil, true, true, false},
		{"ccf, image still ours (another condition)", wrapped(&types.ConditionalCheckFailedException{Item: image("a", 3)}), nil, true, false, false},
		{"tx, our item refused", tce(reason("None", nil), reason("ConditionalCheckFailed", nil)), []int{1}, true, true, false},
		{"tx, another item refused", tce(reason("ConditionalCheckFailed", nil), reason("None", nil)), []int{1}, false, false, false},
		{"tx, any item refused", tce(reason("ConditionalCheckFailed", nil), reason("None", nil)), nil, true, true, false},
		{"tx, our item refused, image ours", tce(reason("None", nil), reason("ConditionalCheckFailed", image("a", 3))), []int{1}, true, false, false},
		{"tx, our item refused, image revoked", tce(reason("None", nil), reason("ConditionalCheckFailed", image("", 4))), []int{1}, true, true, false},
		{"tx, conflict", tce(reason("TransactionConflict", nil), reason("None", nil)), []int{1}, false, false, true},
		{"conflict exception", wrapped(&types.TransactionConflictException{}), nil, false, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Refused(c.err, c.items...); got != c.refused {
				t.Errorf("Refused = %v, want %v", got, c.refused)
			}
			if got := Conflict(c.err); got != c.conflct {
				t.Errorf("Conflict = %v, want %v", got, c.conflct)
			}
			got := Default.Check(c.err, "end", h, c.items...)
			if errors.Is(got, ErrFenced) != c.fenced || Lost(got) != c.fenced {
				t.Fatalf("Check = %v: fenced %v, want %v", got, errors.Is(got, ErrFenced), c.fenced)
			}
			if !c.fenced && got != c.err {
				t.Fatalf("Check changed a non-fenced error: %v, want %v", got, c.err)
			}
			if c.fenced {
				var fe *FencedError
				if !errors.As(got, &fe) || fe.Hold != h || !errors.Is(got, errors.Unwrap(c.err)) {
					t.Fatalf("Check = %#v: want a *FencedError of %v wrapping the SDK's error", got, h)
				}
				if !strings.Contains(got.Error(), "end fenced: a no longer holds the lease of token 3") {
					t.Fatalf("message %q", got.Error())
				}
			}
		})
	}
}

func TestHoldOfAndToken(t *testing.T) {
	if got := Default.HoldOf(image("b", 7)); got != (Hold{Holder: "b", Token: 7}) {
		t.Fatalf("HoldOf = %+v", got)
	}
	if got := Default.HoldOf(map[string]types.AttributeValue{}); got != (Hold{}) {
		t.Fatalf("HoldOf(empty) = %+v", got)
	}
	if Token(41).Next() != 42 || Token(42).String() != "42" {
		t.Fatal("Next/String")
	}
}

// The expressions name the attributes of the fence and the values of the
// hold: built and read back, the steps say what the package doc promises.
func TestStepExpressions(t *testing.T) {
	until := time.UnixMilli(5000)
	build := func(s Step) (string, string, map[string]string) {
		e, err := expression.NewBuilder().WithCondition(s.Cond).WithUpdate(s.Update).Build()
		if err != nil {
			t.Fatal(err)
		}
		// Resolve placeholders so the assertions read as the expressions do.
		r := map[string]string{}
		for k, v := range e.Names() {
			r[k] = v
		}
		for k, v := range e.Values() {
			switch x := v.(type) {
			case *types.AttributeValueMemberN:
				r[k] = x.Value
			case *types.AttributeValueMemberS:
				r[k] = "'" + x.Value + "'"
			}
		}
		resolve := func(s string) string {
			return placeholder.ReplaceAllStringFunc(s, func(k string) string { return r[k] })
		}
		return resolve(strings.TrimSpace(*e.Condition())), resolve(strings.TrimSpace(*e.Update())), r
	}
	a := Default.Acquire(0, "w1", until)
	if a.Hold != (Hold{Holder: "w1", Token: 1}) {
		t.Fatalf("Acquire hold %+v", a.Hold)
	}
	c, u, _ := build(a)
	if c != "(attribute_not_exists (fence_token)) OR (fence_token = 0)" ||
		!strings.Contains(u, "fence_token = 1") || !strings.Contains(u, "holder = 'w1'") || !strings.Contains(u, "lease_until = 5000") {
		t.Fatalf("Acquire: condition %q update %q", c, u)
	}
	c, _, _ = build(Default.Acquire(4, "w2", time.Time{}))
	if c != "fence_token = 4" {
		t.Fatalf("Acquire(4): condition %q", c)
	}
	h := Hold{Holder: "w1", Token: 5}
	c, u, _ = build(Default.Renew(h, until))
	if c != "(fence_token = 5) AND (holder = 'w1')" || u != "SET lease_until = 5000" {
		t.Fatalf("Renew: %q %q", c, u)
	}
	c, u, _ = build(Default.Release(h))
	if c != "(fence_token = 5) AND (holder = 'w1')" || !strings.Contains(u, "SET fence_token = 6") || !strings.Contains(u, "REMOVE holder, lease_until") {
		t.Fatalf("Release: %q %q", c, u)
	}
	c, u, _ = build(Default.Revoke(5))
	if c != "fence_token = 5" || !strings.Contains(u, "SET fence_token = 6") || !strings.Contains(u, "REMOVE holder, lease_until") {
		t.Fatalf("Revoke: %q %q", c, u)
	}
	w := Default.Write(h)
	w.Update = w.Update.Set(expression.Name("state"), expression.Value("RUNNING"))
	c, u, _ = build(w)
	if c != "(fence_token = 5) AND (holder = 'w1')" || u != "SET state = 'RUNNING'" {
		t.Fatalf("Write: %q %q", c, u)
	}
}

// store is a one-item lease store with the fence's conditions, for the
// heartbeat tests: a heartbeat of a hold that is not the item's is fenced.
type store struct {
	mu    sync.Mutex
	hold  Hold
	until time.Time
	beats int
	fail  int // fail the next n heartbeats with a transient error
}

func (s *store) beat(h Hold) Beat {
	return func(ctx context.Context, until time.Time) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.fail > 0 {
			s.fail--
			return errors.New("transient: DynamoDB did not answer")
		}
		if s.hold != h {
			return &FencedError{Op: "heartbeat", Hold: h, Now: s.hold}
		}
		s.until = until
		s.beats++
		return nil
	}
}

func (s *store) revoke() {
	s.mu.Lock()
	s.hold = Hold{Token: s.hold.Token.Next()}
	s.mu.Unlock()
}

// A holder's heartbeats renew its lease while the work runs; Stop with the
// lease held returns nil and the work's context is not cancelled by a loss.
func TestKeepRenews(t *testing.T) {
	h := Hold{Holder: "a", Token: 1}
	s := &store{hold: h}
	lease := 200 * time.Millisecond
	since := time.Now()
	k, wctx := Keep(context.Background(), since, lease, s.beat(h))
	time.Sleep(3 * lease) // about 12 heartbeats are due
	if context.Cause(wctx) != nil {
		t.Fatalf("work cancelled while the lease was held: %v", context.Cause(wctx))
	}
	if err := k.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if k.Beats() < 2 || !k.Valid().After(since.Add(lease)) {
		t.Fatalf("%d heartbeats, valid until %s: the lease was not renewed past its first end %s", k.Beats(), k.Valid(), since.Add(lease))
	}
	if !s.until.Equal(k.Valid()) {
		t.Fatalf("store's lease end %s, keeper's %s: they must agree", s.until, k.Valid())
	}
}

// When the lease is revoked, the next heartbeat is fenced: the work's
// context is cancelled with a cause matching ErrFenced, and Stop returns it.
func TestKeepFencedCancelsWork(t *testing.T) {
	h := Hold{Holder: "a", Token: 1}
	s := &store{hold: h}
	lease := 200 * time.Millisecond
	err := Do(context.Background(), time.Now(), lease, s.beat(h), func(ctx context.Context) error {
		time.Sleep(lease / 2)
		s.revoke()
		<-ctx.Done() // the work stops only when told to
		if c := context.Cause(ctx); !errors.Is(c, ErrFenced) {
			return fmt.Errorf("work cancelled with %v, want ErrFenced", c)
		}
		return nil
	})
	if !errors.Is(err, ErrFenced) {
		t.Fatalf("Do = %v, want ErrFenced", err)
	}
}

// Heartbeats that do not get through (DynamoDB stalled) stop the work with
// ErrExpired, and no heartbeat is given a deadline past the lease's end
// less the margin.
func TestKeepExpiresWhenBeatsHang(t *testing.T) {
	lease := 200 * time.Millisecond
	margin := lease / 4
	since := time.Now()
	var late atomic.Int64
	hang := func(ctx context.Context, until time.Time) error {
		if d, ok := ctx.Deadline(); !ok || d.After(since.Add(lease-margin)) {
			late.Add(1)
		}
		<-ctx.Done()
		return ctx.Err()
	}
	k, wctx := Keep(context.Background(), since, lease, hang)
	<-wctx.Done()
	if c := context.Cause(wctx); !errors.Is(c, ErrExpired) || errors.Is(c, ErrFenced) {
		t.Fatalf("cause %v, want ErrExpired", c)
	}
	if err := k.Stop(); !errors.Is(err, ErrExpired) {
		t.Fatalf("Stop = %v", err)
	}
	if late.Load() != 0 {
		t.Fatalf("%d heartbeats had a deadline past the lease's end less the margin", late.Load())
	}
}

// A heartbeat whose reply is held (a slow connection) is hedged: after
// Hedge a copy with the same lease end is sent, and its answer keeps the
// lease although no first call ever answers before the margin. With Hedge
// off, the same held replies lose the lease.
func TestKeepHedgesAHeldHeartbeat(t *testing.T) {
	h := Hold{Holder: "a", Token: 1}
	lease := 400 * time.Millisecond
	run := func(hedge time.Duration) (*Keeper, context.Context, *store) {
		s := &store{hold: h}
		var calls atomic.Int64
		held := func(ctx context.Context, until time.Time) error {
			if calls.Add(1)%2 == 1 { // every first call of a heartbeat: no reply
				<-ctx.Done()
				return ctx.Err()
			}
			return s.beat(h)(ctx, until)
		}
		k, wctx := Keep(context.Background(), time.Now(), lease, held, func(o *Options) { o.Hedge = hedge })
		time.Sleep(3 * lease)
		return k, wctx, s
	}
	k, wctx, s := run(0)
	if err := k.Stop(); err != nil || context.Cause(wctx) != context.Canceled {
		t.Fatalf("hedged: Stop = %v, cause %v: a copy of each held heartbeat should have kept the lease", err, context.Cause(wctx))
	}
	if k.Copies() < 2 || k.Beats() < 2 || !s.until.Equal(k.Valid()) {
		t.Fatalf("hedged: %d copies, %d heartbeats, store's end %s, keeper's %s", k.Copies(), k.Beats(), s.until, k.Valid())
	}
	k, _, _ = run(-1)
	if err := k.Stop(); !errors.Is(err, ErrExpired) {
		t.Fatalf("not hedged: Stop = %v, want ErrExpired (the test's held replies must cost the lease without copies)", err)
	}
}

// Transient failures are retried while the lease lasts: a few failed
// heartbeats followed by one that gets through lose nothing.
func TestKeepRetriesTransientFailures(t *testing.T) {
	h := Hold{Holder: "a", Token: 1}
	s := &store{hold: h, fail: 2}
	lease := 400 * time.Millisecond
	k, wctx := Keep(context.Background(), time.Now(), lease, s.beat(h))
	time.Sleep(lease)
	if err := k.Stop(); err != nil || context.Cause(wctx) != context.Canceled {
		t.Fatalf("Stop = %v, cause %v: two failed heartbeats within the lease must not lose it", err, context.Cause(wctx))
	}
	if s.fail != 0 || s.beats == 0 {
		t.Fatalf("failures left %d, beats %d", s.fail, s.beats)
	}
}

// The bug of issue 15: the holder is paused past its lease (here its clock
// jumps, as a SIGSTOP makes it), the lease is revoked meanwhile, and the
// work returns at the instant the process resumes, before the heartbeat
// timer fires. Stop still sends the due heartbeat, which is fenced: the
// holder learns it lost the lease before its last write.
func TestStopSendsTheDueHeartbeat(t *testing.T) {
	for _, taken := range []bool{true, false} {
		t.Run(fmt.Sprintf("revoked=%v", taken), func(t *testing.T) {
			h := Hold{Holder: "a", Token: 1}
			s := &store{hold: h}
			var skew atomic.Int64
			now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
			lease := time.Second
			err := Do(context.Background(), now(), lease, s.beat(h), func(ctx context.Context) error {
				skew.Store(int64(3 * lease)) // paused for three leases
				if taken {
					s.revoke()
				}
				return nil // the work "finished" during the pause
			}, func(o *Options) { o.Now = now })
			switch {
			case taken && !errors.Is(err, ErrFenced):
				t.Fatalf("Do = %v: the due heartbeat was skipped, want ErrFenced", err)
			case !taken && err != nil:
				t.Fatalf("Do = %v: nobody took the lease, the late heartbeat must renew it", err)
			case !taken && s.beats != 1:
				t.Fatalf("%d heartbeats, want the one due after the pause", s.beats)
			}
		})
	}
}

// A cancelled parent stops the heartbeats and Stop reports its cause, not a
// loss of the lease.
func TestKeepParentCancelled(t *testing.T) {
	h := Hold{Holder: "a", Token: 1}
	s := &store{hold: h}
	ctx, cancel := context.WithCancelCause(context.Background())
	k, _ := Keep(ctx, time.Now(), time.Second, s.beat(h))
	stop := errors.New("shutting down")
	cancel(stop)
	if err := k.Stop(); !errors.Is(err, stop) || Lost(err) {
		t.Fatalf("Stop = %v, want the parent's cause", err)
	}
}

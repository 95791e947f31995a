package leaselab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/lease"
)

// Notebook 05's two network faults, injected for real against DynamoDB
// Local: a claim whose reply is lost after it landed (an HTTP proxy in
// this process forwards the claim, lets DynamoDB apply it, and closes the
// connection instead of answering, as a network that drops the reply
// does: the SDK sees a broken connection and sends the claim again), and
// worker processes whose clocks are off (the queuekit CLI's test-only
// QUEUEKIT_CLOCK_OFFSET). The tests of package lease inject the same lost
// reply with Toxiproxy (internal/toxitest); the workshop's lab image does
// not install the Toxiproxy server, so the notebook uses this proxy, which
// needs nothing but Go.

// LostReplyDate and SkewDate are the nights the demonstrations run: dates
// of their own, so they never reset a night of the workshop's catalog.
const (
	LostReplyDate = "2031-01-02"
	SkewDate      = "2031-01-03"
)

// ClaimTry is one claim request as the proxy saw it.
type ClaimTry struct {
	SDKAttempt int      // the SDK's attempt number (its amz-sdk-request header): 2 and up are retries
	Jobs       []string // the jobs it claims
	Status     int      // DynamoDB's HTTP status
	Answer     string   // "OK", or the error DynamoDB answered (its __type, without the namespace)
	Dropped    bool     // DynamoDB applied it and answered; the proxy closed the connection instead of passing the answer on
	NoToken    bool     // the proxy removed its ClientRequestToken (a retry DynamoDB no longer recognises)
}

// replyDropper is the proxy: every request goes through to DynamoDB; the
// replies of the first drop claims are not passed on.
type replyDropper struct {
	upstream *url.URL
	base     http.RoundTripper
	mu       sync.Mutex
	drop     int
	forget   bool // remove the ClientRequestToken from retried claims
	tries    []ClaimTry
}

var errReplyDropped = errors.New("reply dropped on purpose")

var jobKey = regexp.MustCompile(`"JOB#([^"]+)"`)

// isClaim tells a claim transaction from the executor's other writes (as
// the lease package's netfault tests classify them).
func isClaim(op string, body []byte) bool {
	has := func(s string) bool { return bytes.Contains(body, []byte(s)) }
	return op == "TransactWriteItems" && has(`"ATTEMPT#`) && !has(`"finished_ms"`) && !has(`lease expired: worker`) &&
		!has(`"PREPARING"`) && !has(`"join_nonce"`) && !has(`"WORKER#`)
}

func (d *replyDropper) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	op := r.Header.Get("X-Amz-Target")
	op = op[strings.LastIndex(op, ".")+1:]
	attempt := sdkAttempt(r.Header.Get("Amz-Sdk-Request"))
	noToken := d.forget && attempt > 1 && isClaim(op, body)
	if noToken {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, fmt.Errorf("lost-reply proxy: read a claim: %w", err)
		}
		delete(m, "ClientRequestToken")
		if body, err = json.Marshal(m); err != nil {
			return nil, fmt.Errorf("lost-reply proxy: rewrite a claim: %w", err)
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	}
	resp, err := d.base.RoundTrip(r)
	if err != nil || !isClaim(op, body) {
		return resp, err
	}
	out, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	t := ClaimTry{SDKAttempt: attempt, Status: resp.StatusCode, Answer: "OK", NoToken: noToken}
	for _, m := range jobKey.FindAllSubmatch(body, -1) {
		t.Jobs = append(t.Jobs, string(m[1]))
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type string `json:"__type"`
		}
		_ = json.Unmarshal(out, &e)
		t.Answer = e.Type[strings.LastIndex(e.Type, "#")+1:]
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.drop > 0 {
		d.drop--
		t.Dropped = true
	}
	d.tries = append(d.tries, t)
	if t.Dropped {
		return nil, errReplyDropped
	}
	return resp, nil
}

// sdkAttempt reads "attempt=N; max=M".
func sdkAttempt(h string) int {
	for _, f := range strings.Split(h, ";") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(f), "attempt="); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// startDropper starts the proxy in front of upstream (an http:// URL) on a
// loopback port the kernel picks; stop closes it.
func startDropper(upstream string, drop int, forget bool) (d *replyDropper, endpoint string, stop func(), err error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return nil, "", nil, fmt.Errorf("lost-reply proxy: upstream %q is not an http:// URL: the demonstration needs DynamoDB Local (AWS_ENDPOINT_URL_DYNAMODB)", upstream)
	}
	d = &replyDropper{upstream: u, base: http.DefaultTransport.(*http.Transport).Clone(), drop: drop, forget: forget}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(u)
			pr.Out.Host = pr.In.Host // the request is signed for the host the client named
		},
		Transport: d,
		// A dropped reply: close the connection without answering.
		ErrorHandler: func(http.ResponseWriter, *http.Request, error) { panic(http.ErrAbortHandler) },
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, fmt.Errorf("lost-reply proxy: listen: %w", err)
	}
	srv := &http.Server{Handler: rp, ErrorLog: log.New(io.Discard, "", 0), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return d, "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// LostReplyResult is what RunLostReply saw and read back.
type LostReplyResult struct {
	Tries    []ClaimTry    // the claim requests of the night, in order
	Attempts []lease.Entry // every attempt of the night, read back from the table
	Jobs     []lease.JobState
	Won      int // claims the worker counted as won (its WORKER# item)
	Lost     int // and as lost
	Statuses map[queuekit.Status]int
}

// LostReplyConfig is the lost-reply demonstration's one choice.
type LostReplyConfig struct {
	// ForgetToken makes the proxy remove the ClientRequestToken from the
	// SDK's retry of the claim, so DynamoDB takes it for a new transaction,
	// as it does after the token's ten minutes or on a server that keeps
	// no tokens: the retry is then refused by the claim's own conditions,
	// and the worker must recognise its claim_nonce in the refusal.
	ForgetToken bool
}

// RunLostReply runs a three-job night (one slot, jobs of 10 job-minutes of
// 50 ms) whose first claim's reply is lost after DynamoDB applied it: the
// claim goes through the in-process proxy, lands, and the proxy closes the
// connection without passing DynamoDB's answer on. The SDK sends the same
// transaction again, with the same ClientRequestToken. It returns the
// claim requests as the proxy saw them (what DynamoDB answered each one),
// and the night read back from the table: every attempt with its fencing
// tokens, the jobs' items, and the worker's claim counters.
func RunLostReply(ctx context.Context, cfg LostReplyConfig, opts ...catalog.Option) (LostReplyResult, error) {
	cat0, err := catalog.New(ctx, opts...)
	if err != nil {
		return LostReplyResult{}, err
	}
	d, endpoint, stop, err := startDropper(cat0.Endpoint(), 1, cfg.ForgetToken)
	if err != nil {
		return LostReplyResult{}, err
	}
	defer stop()
	cat, err := catalog.New(ctx, append(append([]catalog.Option{}, opts...), catalog.WithEndpoint(endpoint))...)
	if err != nil {
		return LostReplyResult{}, err
	}
	ex, err := lease.New(cat)
	if err != nil {
		return LostReplyResult{}, err
	}
	night, err := demoNight(LostReplyDate, 3, 10)
	if err != nil {
		return LostReplyResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	lc := lease.Config{Workers: 1, Minute: 50 * time.Millisecond, Lease: 2 * time.Second, MaxRetry: lease.DefaultMaxRetry}
	rep, err := ex.Run(ctx, night, lease.RunConfig{Config: lc, Slots: 1})
	if err != nil {
		return LostReplyResult{}, fmt.Errorf("the night with a lost claim reply: %w", err)
	}
	d.mu.Lock()
	tries := append([]ClaimTry(nil), d.tries...)
	d.mu.Unlock()
	return LostReplyResult{Tries: tries, Attempts: rep.Schedule, Jobs: rep.Jobs, Won: rep.Won, Lost: rep.Lost, Statuses: rep.Statuses}, nil
}

// demoNight is a night of n ordinary jobs of the given runtime, all due at
// minute 0.
func demoNight(date string, n, minutes int) (queuekit.Night, error) {
	var jobs []queuekit.Job
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("JOB-%s-%03d", strings.ReplaceAll(date, "-", ""), i)
		jobs = append(jobs, queuekit.Job{BatchDate: date, JobID: id, WindowJobID: queuekit.SortKey("01:00", id), RequestedWindow: "01:00",
			SubmittedAt: date + "T00:00:00Z", WorkloadClass: queuekit.WorkloadClasses[0], RuntimeMinutes: minutes, Priority: 1, Status: "queued"})
	}
	return queuekit.NewNight(date, queuekit.DefaultWindow, jobs)
}

// ShowLostReply shows the claim requests and the night read back as two
// small tables, then a sentence built from them.
func ShowLostReply(r LostReplyResult) {
	rows := [][]string{}
	for _, t := range r.Tries {
		fate := "passed on"
		if t.Dropped {
			fate = "dropped by the proxy"
		}
		tok := "sent"
		if t.NoToken {
			tok = "removed by the proxy"
		}
		rows = append(rows, []string{format.Int(t.SDKAttempt), shortIDs(t.Jobs), tok, format.Int(t.Status) + " " + t.Answer, fate})
	}
	lab.ShowTable([]string{"claim request (SDK attempt)", "jobs", "ClientRequestToken", "DynamoDB answered", "the answer"}, rows)
	rows = rows[:0]
	for _, a := range r.Attempts {
		rows = append(rows, []string{shortID(a.ID), format.Int(a.Attempt), a.Worker, format.Int(a.ClaimToken), format.Int(a.EndToken), string(a.Outcome)})
	}
	lab.ShowTable([]string{"job", "attempt", "worker", "claim token", "end token", "outcome"}, rows)
	lab.Markdown(LostReplySummary(r))
}

// LostReplySummary says, from the run's values, what the lost reply did.
func LostReplySummary(r LostReplyResult) string {
	var lost *ClaimTry
	retries := 0
	for i := range r.Tries {
		if r.Tries[i].Dropped && lost == nil {
			lost = &r.Tries[i]
		}
		if r.Tries[i].SDKAttempt > 1 {
			retries++
		}
	}
	if lost == nil {
		return "No claim reply was dropped: the fault was not injected."
	}
	perJob := map[string]int{}
	for _, a := range r.Attempts {
		perJob[a.ID]++
	}
	s := fmt.Sprintf("The claim of %s landed (DynamoDB answered %s) and its reply was dropped; the SDK sent it again %s. ",
		shortIDs(lost.Jobs), lost.Answer, lab.Times(retries))
	for _, t := range r.Tries {
		if t.SDKAttempt > 1 && !t.Dropped {
			if t.Answer == "OK" {
				s += "DynamoDB answered the retry **OK** without applying it twice: the same ClientRequestToken within ten minutes is the same transaction. "
			} else {
				s += fmt.Sprintf("DynamoDB took the retry for a new transaction and refused it (**%s**): the job had left the claimable index and its `fence_token` had moved on, by this very claim. The refusal's old image carries the worker's own `claim_nonce`, so it counted the claim as won, not as a lost race. ",
					format.EscapeMarkdown(t.Answer))
			}
			break
		}
	}
	return s + fmt.Sprintf("The table holds **%s** for **%s** (%s), the worker counted %s won and %s lost, and every job is %s.",
		lab.Plural(len(r.Attempts), "attempt", "attempts"), lab.Plural(len(perJob), "job", "jobs"), onePerJob(perJob),
		format.Int(r.Won), format.Int(r.Lost), statusList(r.Statuses))
}

func onePerJob(perJob map[string]int) string {
	for _, n := range perJob {
		if n != 1 {
			return "a job claimed twice"
		}
	}
	return "one each"
}

func statusList(st map[queuekit.Status]int) string {
	var parts []string
	for s, n := range st {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s (%d)", format.EscapeMarkdown(string(s)), n))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

func shortID(id string) string { return id[strings.LastIndex(id, "-")+1:] }

func shortIDs(ids []string) string {
	var s []string
	for _, id := range ids {
		s = append(s, "job "+shortID(id))
	}
	return strings.Join(s, ", ")
}

// SkewWorker is one worker of the skewed-clocks night.
type SkewWorker struct {
	Name     string
	Offset   time.Duration // how far its wall clock is off
	Attempts int           // attempts it claimed, read back from the table
	Success  int           // of which ended SUCCESS
	Counters lease.WorkerStats
}

// SkewResult is what RunSkewedClocks read back.
type SkewResult struct {
	Lease    time.Duration
	Workers  []SkewWorker
	Attempts int // attempts in the table
	Jobs     int
	Statuses map[queuekit.Status]int
	Verify   error // the run's verdict on the table's own orders (nil: it holds)
}

// RunSkewedClocks runs a night of nine jobs of 20 job-minutes (50 ms each,
// all due at once, lease 2 s) with three one-slot workers: "right" in this
// process, and two `queuekit worker` processes whose wall clocks are two
// leases ahead ("ahead") and two leases behind ("behind"), set with the
// CLI's test-only QUEUEKIT_CLOCK_OFFSET. A holder writes lease_until on
// its own clock, so the one behind writes lease ends that are already
// past on the others' clocks, and the one ahead reads every lease end as
// past. It returns each worker's attempts and counters (leases it reaped,
// ends fenced, leases dropped) and the run's verdict.
func RunSkewedClocks(ctx context.Context, opts ...catalog.Option) (SkewResult, error) {
	const leaseLen = 2 * time.Second
	bin, err := QueuekitBinary(ctx)
	if err != nil {
		return SkewResult{}, err
	}
	cat, err := catalog.New(ctx, opts...)
	if err != nil {
		return SkewResult{}, err
	}
	ex, err := lease.New(cat)
	if err != nil {
		return SkewResult{}, err
	}
	night, err := demoNight(SkewDate, 9, 20)
	if err != nil {
		return SkewResult{}, err
	}
	cfg := lease.Config{Workers: 3, Minute: 50 * time.Millisecond, Lease: leaseLen, MaxRetry: lease.DefaultMaxRetry}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	runID, err := ex.Prepare(ctx, night, cfg)
	if err != nil {
		return SkewResult{}, err
	}
	res := SkewResult{Lease: leaseLen, Workers: []SkewWorker{{Name: "right"}, {Name: "ahead", Offset: 2 * leaseLen}, {Name: "behind", Offset: -2 * leaseLen}}}
	type proc struct {
		cmd      *exec.Cmd
		out, err bytes.Buffer
	}
	var procs []*proc
	for _, w := range res.Workers[1:] {
		p := &proc{cmd: exec.CommandContext(ctx, bin, "worker", "--batch-date", SkewDate, "--table", cat.Table(), "--json", "--slots", "1", "--name", w.Name)}
		if ep := cat.Endpoint(); ep != "" {
			p.cmd.Args = append(p.cmd.Args, "--endpoint", ep)
		}
		p.cmd.Env = append(p.cmd.Environ(), lease.EnvClockOffset+"="+w.Offset.String())
		p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.err
		if err := p.cmd.Start(); err != nil {
			return res, fmt.Errorf("start queuekit worker %s: %w", w.Name, err)
		}
		procs = append(procs, p)
	}
	right := make(chan error, 1)
	go func() {
		st, err := ex.Join(ctx, SkewDate, lease.WorkerConfig{Slots: 1, Name: "right"})
		res.Workers[0].Counters = st
		right <- err
	}()
	if err := ex.Start(ctx, SkewDate, runID); err != nil {
		return res, err
	}
	if err := ex.WaitDone(ctx, SkewDate, runID, nil); err != nil {
		return res, err
	}
	if err := <-right; err != nil {
		return res, fmt.Errorf("worker right: %w", err)
	}
	for i, p := range procs {
		w := &res.Workers[i+1]
		if err := p.cmd.Wait(); err != nil {
			return res, fmt.Errorf("queuekit worker %s (clock %s): %v: %s", w.Name, w.Offset, err, strings.TrimSpace(p.err.String()))
		}
		if err := json.Unmarshal(p.out.Bytes(), &w.Counters); err != nil {
			return res, fmt.Errorf("queuekit worker %s --json: %w", w.Name, err)
		}
	}
	rep, err := ex.Report(ctx, night, cfg.Workers)
	if err != nil {
		return res, err
	}
	for _, a := range rep.Schedule {
		for i := range res.Workers {
			if res.Workers[i].Name == a.Worker {
				res.Workers[i].Attempts++
				if a.Outcome == queuekit.StatusSuccess {
					res.Workers[i].Success++
				}
			}
		}
	}
	res.Attempts, res.Jobs, res.Statuses, res.Verify = len(rep.Schedule), len(night.Jobs), rep.Statuses, rep.Verify(night)
	return res, nil
}

// ShowSkewedClocks shows each worker of the skewed night as a row, then a
// sentence built from the values.
func ShowSkewedClocks(r SkewResult) {
	rows := [][]string{}
	for _, w := range r.Workers {
		rows = append(rows, []string{w.Name, signedSeconds(w.Offset), format.Int(w.Attempts), format.Int(w.Success),
			format.Int(w.Counters.Reaped), format.Int(w.Counters.Fenced), format.Int(w.Counters.Dropped)})
	}
	lab.ShowTable([]string{"worker", "clock off by", "attempts claimed", "SUCCESS", "leases it took over", "ends fenced", "leases lost"}, rows)
	lab.Markdown(SkewSummary(r))
}

// SkewSummary says, from the run's values, what the skewed clocks did.
func SkewSummary(r SkewResult) string {
	reaped := 0
	for _, w := range r.Workers {
		reaped += w.Counters.Reaped
	}
	s := fmt.Sprintf("With a lease of %s s, a reaper that compared `lease_until` with its own clock would have taken over every lease the *behind* worker wrote "+
		"(its lease ends lie %s s in the past on a right clock) and the *ahead* worker would have taken over everyone's. ",
		format.Num(r.Lease.Seconds()), format.Num((2*r.Lease - r.Lease).Seconds()))
	s += fmt.Sprintf("These reapers took over **%s**: the table holds %s for %s jobs, and the jobs are %s. ",
		lab.Plural(reaped, "lease", "leases"), lab.Plural(r.Attempts, "attempt", "attempts"), format.Int(r.Jobs), statusList(r.Statuses))
	if r.Verify != nil {
		return s + "The run's verdict on the table's own orders (fence tokens, pool versions) failed: " + format.EscapeMarkdown(r.Verify.Error())
	}
	return s + "The run's verdict on the table's own orders (fence tokens, pool versions) holds."
}

func signedSeconds(d time.Duration) string {
	if d > 0 {
		return "+" + format.Num(d.Seconds()) + " s"
	}
	return format.Num(d.Seconds()) + " s"
}

package lease

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// This file extends the model check with ambiguous replies: a holder's
// write lands and its reply is lost, so the SDK sends the same write again
// (same claim, same start time, same end nonce). The fake store applies the
// retry under the rules the executor uses since issue 25 (a start accepts
// PROCESSING since this very start; an end and a claim refused by their own
// landing recognise their nonce) or under the rules before (start only from
// CLAIMED; a refused end counted as fenced; a refused claim counted lost).

type lostJob struct {
	status                queuekit.Status
	token                 int
	holder                string
	startedBy             int // the start that set PROCESSING
	claimNonce, endNonce  int
	busy, ended, fenced   int
	selfFenced, strandedN int
}

type lostHolder struct {
	phase                  string // idle, claimed, started, ended
	token                  int
	start, claim, endNonce int
	retry                  string // the write whose reply was lost: "claim", "start", "end" or ""
	dead                   bool   // a refused write of its own stopped the worker
}

type lostModel struct {
	idempotent bool
	seq        int
	job        lostJob
	h          [2]lostHolder
	log        []string
}

func (m *lostModel) next() int { m.seq++; return m.seq }

func (m *lostModel) step(a string) bool {
	j := &m.job
	i := int(a[0] - '0')
	h := &m.h[i]
	if h.dead {
		return false
	}
	held := j.holder == fmt.Sprint(i) && j.token == h.token
	switch act := a[2:]; act {
	case "claim", "claim-lost-reply":
		if h.phase != "idle" || j.status != queuekit.StatusNotStarted || h.retry != "" {
			return false
		}
		// The claim lands (condition: claimable, token as read).
		h.claim = m.next()
		j.status, j.holder, j.claimNonce = queuekit.StatusClaimed, fmt.Sprint(i), h.claim
		j.token++
		j.busy++
		h.token, h.phase = j.token, "claimed"
		if act == "claim-lost-reply" {
			h.retry = "claim"
		}
	case "start", "start-lost-reply":
		if h.phase != "claimed" || h.retry != "" {
			return false
		}
		if held && j.status == queuekit.StatusClaimed {
			h.start = m.next()
			j.status, j.startedBy = queuekit.StatusProcessing, h.start
			h.phase = "started"
			if act == "start-lost-reply" {
				h.retry = "start"
			}
		}
	case "end", "end-lost-reply":
		if h.phase != "started" || h.retry != "" {
			return false
		}
		if !held || j.ended >= 1 {
			j.fenced++
			h.phase = "ended"
			break
		}
		h.endNonce = m.next()
		j.status, j.endNonce, j.holder = queuekit.StatusSuccess, h.endNonce, ""
		j.token++
		j.busy--
		j.ended++
		h.phase = "ended"
		if act == "end-lost-reply" {
			h.retry = "end"
		}
	case "retry":
		switch h.retry {
		case "":
			return false
		case "claim": // refused: the token moved on (by this very claim)
			if !(m.idempotent && j.claimNonce == h.claim) {
				h.phase = "idle" // counted as a lost race: the job it holds is left alone
				if j.status == queuekit.StatusClaimed && j.holder == fmt.Sprint(i) {
					j.strandedN++
				}
			}
		case "start": // condition: held and CLAIMED, or (new) PROCESSING since this start
			ok := held && (j.status == queuekit.StatusClaimed || m.idempotent && j.status == queuekit.StatusProcessing && j.startedBy == h.start)
			if !ok {
				h.dead = true // a refused start stops the worker's errgroup
			}
		case "end": // refused: the token moved on (by this very end)
			if !(m.idempotent && j.endNonce == h.endNonce) {
				j.fenced++
				j.selfFenced++
			}
		}
		h.retry = ""
	}
	m.log = append(m.log, a)
	return true
}

func (m *lostModel) invariants() error {
	j := m.job
	switch {
	case j.busy < 0 || j.busy > 1:
		return fmt.Errorf("busy = %d, outside 0..1", j.busy)
	case j.ended > 1:
		return fmt.Errorf("the job ended %d times", j.ended)
	case m.h[0].dead || m.h[1].dead:
		return fmt.Errorf("a worker died on the retry of its own start that had landed")
	case j.selfFenced > 0:
		return fmt.Errorf("a holder counted its own end, which had landed, as fenced")
	case j.strandedN > 0:
		return fmt.Errorf("a holder counted a claim it had won as lost: the job is stranded until its lease expires")
	}
	return nil
}

var lostActions = []string{
	"0 claim", "0 claim-lost-reply", "0 start", "0 start-lost-reply", "0 end", "0 end-lost-reply", "0 retry",
	"1 claim", "1 claim-lost-reply", "1 start", "1 start-lost-reply", "1 end", "1 end-lost-reply", "1 retry"}

func exploreLost(idempotent bool, seed uint64, count, steps int) error {
	rng := rand.New(rand.NewPCG(seed, 25))
	for run := range count {
		m := &lostModel{idempotent: idempotent, job: lostJob{status: queuekit.StatusNotStarted}}
		m.h[0].phase, m.h[1].phase = "idle", "idle"
		for range steps {
			moved := false
			for range 200 { // some states enable nothing more (the job ended)
				if m.step(lostActions[rng.IntN(len(lostActions))]) {
					moved = true
					break
				}
			}
			if err := m.invariants(); err != nil {
				return fmt.Errorf("run %d: %w after %s", run, err, strings.Join(m.log, ", "))
			}
			if !moved {
				break
			}
		}
	}
	return nil
}

// Lost replies: under the executor's rules every retried write that had
// landed is recognised (no worker dies, no own end counted as fenced, no
// won claim counted as lost, nothing ends twice) over 20,000 random
// interleavings; under the rules before issue 25 each of these breaks,
// which shows the check can fail.
func TestModelLostReplies(t *testing.T) {
	if err := exploreLost(true, 1, 20000, 30); err != nil {
		t.Fatalf("idempotent protocol: %v", err)
	}
	err := exploreLost(false, 1, 20000, 30)
	if err == nil {
		t.Fatal("the rules before issue 25 kept every invariant under lost replies: the model cannot tell them apart")
	}
	t.Logf("rules before issue 25: %v", err)
}

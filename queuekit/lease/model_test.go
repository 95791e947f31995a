package lease

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nightqueue/workshop/queuekit"
)

// This file is a model check of the executor's protocol for one job, two
// holders and a reaper: a fake store applies each write with the same
// conditions the executor sends to DynamoDB (claimInput, start, heartbeat,
// end, reap), and random interleavings of the steps, thousands of them,
// are checked after every step. The steps read and write separately, so a
// holder may act on what it read long ago, as a paused process does.
//
// The conditions here are restated by hand, for the protocol of this
// package and the one before fencing tokens; model_skew_test.go checks the
// same promises with the conditions the executor's builders produce, with
// skewed clocks and lost replies.

// modelJob is the JOB item and the pool's counters (c = 1, one job).
type modelJob struct {
	status     queuekit.Status
	token      int
	holder     string
	attempt    int
	leaseUntil int // 0: no lease (not in the leases index)
	busy       int
	ended      int
	finalEnds  int // committed writes that ended the job (SUCCESS or FATAL)
}

// modelHolder is what one holder process knows.
type modelHolder struct {
	name               string
	phase              string // "idle", "read", "claimed", "started"
	seenToken, seenAtt int    // what its claim read
	token, attempt     int    // its hold
}

// modelReaper is the reaper: it reads an expired lease, then writes.
type modelReaper struct {
	read                 bool
	seenToken, seenUntil int
	seenAttempt          int
	seenStatus           queuekit.Status
	seenHolder           string
}

type model struct {
	fenced bool // the protocol of this package (false: the one before fencing tokens)
	now    int
	lease  int
	job    modelJob
	h      [2]modelHolder
	r      modelReaper
	log    []string
}

const modelMaxRetry = 2

func claimable(s queuekit.Status) bool {
	return s == queuekit.StatusNotStarted || s == queuekit.StatusRetriableFailure
}

// step applies action a (if enabled) and reports whether it did anything.
func (m *model) step(a string) bool {
	j := &m.job
	switch {
	case a == "tick":
		m.now++
	case a == "reap-read":
		if m.r.read || j.leaseUntil == 0 || j.leaseUntil >= m.now {
			return false
		}
		m.r = modelReaper{read: true, seenToken: j.token, seenUntil: j.leaseUntil, seenAttempt: j.attempt, seenStatus: j.status, seenHolder: j.holder}
	case a == "reap-write":
		if !m.r.read {
			return false
		}
		m.r.read = false
		var ok bool
		if m.fenced { // end under fence.Revoke and lease_until = seen; pool busy >= 1
			ok = j.token == m.r.seenToken && j.leaseUntil == m.r.seenUntil && j.busy >= 1
		} else { // before: lease_until = seen AND attempt = seen; no counter condition
			ok = j.leaseUntil == m.r.seenUntil && j.attempt == m.r.seenAttempt
		}
		if !ok {
			m.log = append(m.log, "reap refused")
			return true
		}
		final := j.attempt > modelMaxRetry // no retry left: FATAL_FAILURE
		if m.fenced && final && j.ended >= 1 {
			m.log = append(m.log, "reap refused (ended)")
			return true
		}
		j.busy--
		j.leaseUntil = 0
		if m.fenced {
			j.token++
			j.holder = ""
		}
		if final {
			j.status = queuekit.StatusFatalFailure
			j.ended++
			j.finalEnds++
		} else {
			j.status = queuekit.StatusRetriableFailure
		}
	default:
		i := int(a[0] - '0')
		h := &m.h[i]
		switch act := a[2:]; act {
		case "read":
			if h.phase != "idle" || !claimable(j.status) || j.attempt > modelMaxRetry {
				return false
			}
			h.phase, h.seenToken, h.seenAtt = "read", j.token, j.attempt
		case "claim":
			if h.phase != "read" {
				return false
			}
			ok := claimable(j.status) && j.attempt == h.seenAtt && j.busy <= 0 // pool: busy <= c - 1
			if m.fenced {
				ok = ok && j.token == h.seenToken
			}
			if !ok {
				h.phase = "idle"
				m.log = append(m.log, h.name+" claim lost")
				return true
			}
			j.status, j.attempt, j.holder, j.leaseUntil = queuekit.StatusClaimed, j.attempt+1, h.name, m.now+m.lease
			j.busy++
			if m.fenced {
				j.token++
			}
			h.phase, h.token, h.attempt = "claimed", j.token, j.attempt
		case "start", "beat", "end-ok", "end-fail":
			if (act == "start" && h.phase != "claimed") || (act != "start" && h.phase != "started" && h.phase != "claimed") {
				return false
			}
			held := j.holder == h.name && j.attempt == h.attempt
			if m.fenced {
				held = held && j.token == h.token
			}
			switch act {
			case "start":
				if held && j.status == queuekit.StatusClaimed {
					j.status = queuekit.StatusProcessing
				}
				h.phase = "started"
			case "beat":
				if held && (j.status == queuekit.StatusClaimed || j.status == queuekit.StatusProcessing) {
					j.leaseUntil = m.now + m.lease
				}
			default:
				h.phase = "idle"
				final := act == "end-ok" || h.attempt > modelMaxRetry
				if m.fenced {
					held = held && j.busy >= 1 && (!final || j.ended < 1)
				}
				if !held {
					m.log = append(m.log, h.name+" end refused")
					return true
				}
				j.busy--
				j.leaseUntil = 0
				if m.fenced {
					j.token++
					j.holder = ""
				}
				if final {
					j.status = queuekit.StatusSuccess
					if act == "end-fail" {
						j.status = queuekit.StatusFatalFailure
					}
					j.ended++
					j.finalEnds++
				} else {
					j.status = queuekit.StatusRetriableFailure
				}
			}
		}
	}
	m.log = append(m.log, a)
	return true
}

// invariants are the promises, checked after every step.
func (m *model) invariants() error {
	j := m.job
	switch {
	case j.busy < 0 || j.busy > 1:
		return fmt.Errorf("busy = %d, outside 0..c = 1", j.busy)
	case j.ended > 1:
		return fmt.Errorf("ended = %d of 1 job", j.ended)
	case j.finalEnds > 1:
		return fmt.Errorf("the job ended %d times", j.finalEnds)
	case (j.status == queuekit.StatusClaimed || j.status == queuekit.StatusProcessing) != (j.busy == 1):
		return fmt.Errorf("status %s with busy %d", j.status, j.busy)
	case j.attempt > 1+modelMaxRetry:
		return fmt.Errorf("%d attempts, more than 1 + max_retry", j.attempt)
	}
	return nil
}

var modelActions = []string{"tick", "reap-read", "reap-write",
	"0 read", "0 claim", "0 start", "0 beat", "0 end-ok", "0 end-fail",
	"1 read", "1 claim", "1 start", "1 beat", "1 end-ok", "1 end-fail"}

// explore runs count random interleavings of steps steps each and returns
// the first broken invariant, with the steps that led to it.
func explore(fenced bool, seed uint64, count, steps int) error {
	rng := rand.New(rand.NewPCG(seed, 15))
	for run := range count {
		m := &model{fenced: fenced, lease: 2, job: modelJob{status: queuekit.StatusNotStarted}}
		m.h[0].name, m.h[1].name = "a", "b"
		m.h[0].phase, m.h[1].phase = "idle", "idle"
		for range steps {
			for !m.step(modelActions[rng.IntN(len(modelActions))]) {
			}
			if err := m.invariants(); err != nil {
				return fmt.Errorf("run %d: %w after %s", run, err, strings.Join(m.log, ", "))
			}
		}
	}
	return nil
}

// The fenced protocol keeps every invariant over 20,000 random
// interleavings of two holders, a reaper and time; the protocol before
// fencing tokens (holder writes conditioned on worker and attempt only, a
// reaper that left them unchanged, no counter conditions) breaks them,
// which shows the check can fail and why the tokens are there.
func TestModelTwoHoldersOneJob(t *testing.T) {
	if err := explore(true, 1, 20000, 40); err != nil {
		t.Fatalf("fenced protocol: %v", err)
	}
	err := explore(false, 1, 20000, 40)
	if err == nil {
		t.Fatal("the protocol without fencing tokens kept every invariant: the model check cannot tell them apart")
	}
	t.Logf("without fencing tokens: %v", err)
}

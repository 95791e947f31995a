package leaselab

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/fleet"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
)

// Takeover is notebook 10's shard-ownership demonstration: Workers run as
// real `queuekit fleet-worker` processes sharing Shards shards; once they
// have settled, the worker Victim is killed with SIGKILL and the others are
// given Wait to take its shards over after its leases end.
type Takeover struct {
	Bin        string        // the queuekit command (default: QueuekitBinary)
	Shards     int           // default 8
	Workers    []string      // names; default ann, bob, cat
	Victim     int           // index into Workers of the worker killed
	ShardLease time.Duration // a shard's lease; default 2 s
	Settle     time.Duration // at most this long for every shard to have a live owner before the kill; default 5 shard leases
	Wait       time.Duration // at most this long after the kill for the others to own every shard; default 10 shard leases
}

// TakeoverResult is what the demonstration read back from the shard items.
type TakeoverResult struct {
	Before, After []fleet.ShardState // every shard, before the kill and Wait after it
	AtBefore      time.Time          // when Before was read (owners are leases live then)
	AtAfter       time.Time
	Killed        string
	// Watched is a shard the victim owned before the kill (the lowest
	// numbered), as read after the takeover: its history holds the
	// victim's acquire and the survivor's acquire of the lease that ended.
	Watched fleet.ShardState
	// Handover is the acquire in Watched's history that took the victim's
	// lease over (its PrevUntilMS is when that lease ended); the zero entry
	// when the history shows none.
	Handover fleet.Tenure
}

func (t Takeover) withDefaults() Takeover {
	if t.Shards == 0 {
		t.Shards = 8
	}
	if len(t.Workers) == 0 {
		t.Workers = []string{"ann", "bob", "cat"}
	}
	if t.ShardLease == 0 {
		t.ShardLease = 2 * time.Second
	}
	if t.Settle == 0 {
		t.Settle = 5 * t.ShardLease
	}
	if t.Wait == 0 {
		t.Wait = 10 * t.ShardLease
	}
	return t
}

// Run resets the fleet table to t.Shards shards, starts the workers, kills
// the victim, and stops the others with SIGTERM before it returns.
func (t Takeover) Run(ctx context.Context, cat *catalog.Catalog) (TakeoverResult, error) {
	t = t.withDefaults()
	if t.Victim < 0 || t.Victim >= len(t.Workers) {
		return TakeoverResult{}, fmt.Errorf("takeover: victim %d of %d workers: out of range", t.Victim, len(t.Workers))
	}
	if t.Bin == "" {
		bin, err := QueuekitBinary(ctx)
		if err != nil {
			return TakeoverResult{}, err
		}
		t.Bin = bin
	}
	f, err := fleet.New(cat)
	if err != nil {
		return TakeoverResult{}, err
	}
	if err := f.Reset(ctx, t.Shards); err != nil {
		return TakeoverResult{}, err
	}
	var procs []*exec.Cmd
	logs := make([]bytes.Buffer, len(t.Workers))
	defer func() { // every worker still running is stopped, whatever happened
		for _, p := range procs {
			if p.ProcessState == nil {
				_ = p.Process.Signal(syscall.SIGTERM)
				_ = p.Wait()
			}
		}
	}()
	for _, name := range t.Workers {
		args := []string{"fleet-worker", "--shards", fmt.Sprint(t.Shards), "--slots", "2", "--name", name,
			"--shard-lease-ms", fmt.Sprint(t.ShardLease.Milliseconds()), "--table", cat.Table()}
		if ep := cat.Endpoint(); ep != "" {
			args = append(args, "--endpoint", ep)
		}
		p := exec.CommandContext(ctx, t.Bin, args...)
		p.Stderr = &logs[len(procs)]
		if err := p.Start(); err != nil {
			return TakeoverResult{}, fmt.Errorf("start queuekit fleet-worker %s: %w", name, err)
		}
		procs = append(procs, p)
	}
	res := TakeoverResult{Killed: t.Workers[t.Victim]}
	// Before the kill: every shard owned, and the victim owning some.
	if res.Before, res.AtBefore, err = settle(ctx, f, t.Shards, t.Settle, func(s fleet.ShardState, live bool) bool { return live }, res.Killed); err != nil {
		return res, err
	}
	if len(res.Before) == 0 {
		for i, p := range procs { // stop them to read what they said
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
			if msg := strings.TrimSpace(logs[i].String()); msg != "" {
				return res, fmt.Errorf("no worker took a shard in %s; fleet-worker %s: %s", t.Settle, t.Workers[i], msg)
			}
		}
		return res, fmt.Errorf("no worker took a shard in %s", t.Settle)
	}
	if err := procs[t.Victim].Process.Kill(); err != nil {
		return res, fmt.Errorf("kill %s: %w", res.Killed, err)
	}
	_ = procs[t.Victim].Wait() // "signal: killed", as intended
	// After: every shard owned by a live worker other than the victim.
	if res.After, res.AtAfter, err = settle(ctx, f, t.Shards, t.Wait, func(s fleet.ShardState, live bool) bool { return live && s.Holder != res.Killed }, ""); err != nil {
		return res, err
	}
	watch := -1
	for _, s := range res.Before {
		if s.Holder == res.Killed && s.UntilMS > res.AtBefore.UnixMilli() && (watch < 0 || s.Shard < watch) {
			watch = s.Shard
		}
	}
	for _, s := range res.After {
		if s.Shard == watch {
			res.Watched = s
		}
	}
	res.Handover = handover(res.Watched, res.Killed)
	return res, nil
}

// settle reads the shard items every 100 ms until all shards items exist
// and ok holds for every one
// (and, when mustHold is set, that worker owns at least one), or until
// limit has passed; it returns the last reading and its time either way:
// the tables show what was, settled or not.
func settle(ctx context.Context, f *fleet.Fleet, shards int, limit time.Duration, ok func(s fleet.ShardState, live bool) bool, mustHold string) ([]fleet.ShardState, time.Time, error) {
	deadline := time.Now().Add(limit)
	for {
		states, err := f.ShardStates(ctx)
		at := time.Now()
		if err != nil {
			return nil, at, err
		}
		all, held := len(states) == shards, mustHold == ""
		for _, s := range states {
			live := s.Holder != "" && s.UntilMS > at.UnixMilli()
			all = all && ok(s, live)
			held = held || (live && s.Holder == mustHold)
		}
		if (all && held) || at.After(deadline) {
			return states, at, nil
		}
		select {
		case <-ctx.Done():
			return states, at, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// handover is the last acquire in s's history by a worker other than
// killed that took over a lease (PrevUntilMS set) after an acquire by
// killed: the takeover of the victim's tenure.
func handover(s fleet.ShardState, killed string) fleet.Tenure {
	var out fleet.Tenure
	held := false
	for _, e := range s.History {
		switch {
		case e.Op == "acquire" && e.Holder == killed:
			held = true
		case held && e.Op == "acquire" && e.Holder != killed && e.PrevUntilMS > 0:
			out = e
			held = false
		}
	}
	return out
}

// OwnerRows is a row per shard: the shard, its owner (a lease live at `at`,
// else "nobody") and its fencing token.
func OwnerRows(states []fleet.ShardState, at time.Time) [][]string {
	rows := make([][]string, 0, len(states))
	for _, s := range states {
		owner := "nobody"
		if s.Holder != "" && s.UntilMS > at.UnixMilli() {
			owner = s.Holder
		}
		rows = append(rows, []string{fmt.Sprint(s.Shard), owner, fmt.Sprint(s.Token)})
	}
	return rows
}

// HistoryRows is a row per tenure change of one shard: operation, worker,
// token, and what an acquire took over.
func HistoryRows(s fleet.ShardState) [][]string {
	rows := make([][]string, 0, len(s.History))
	for _, e := range s.History {
		took := "a free shard"
		switch {
		case e.Op == "release":
			took = ""
		case e.PrevUntilMS > 0:
			took = fmt.Sprintf("a lease that had ended %s ms before", format.Int(e.AtMS-e.PrevUntilMS))
		}
		rows = append(rows, []string{e.Op, e.Holder, fmt.Sprint(e.Token), took})
	}
	return rows
}

// ShowTakeover shows the owners before and after the kill and the watched
// shard's history.
func ShowTakeover(r TakeoverResult) {
	lab.Markdown(fmt.Sprintf("**%d workers own the shards, before the kill**", countOwners(r.Before, r.AtBefore)))
	lab.ShowTable([]string{"shard", "owner", "fencing token"}, OwnerRows(r.Before, r.AtBefore))
	lab.Markdown(fmt.Sprintf("**%s killed with SIGKILL, %.1f s later**", r.Killed, r.AtAfter.Sub(r.AtBefore).Seconds()))
	lab.ShowTable([]string{"shard", "owner", "fencing token"}, OwnerRows(r.After, r.AtAfter))
	lab.Markdown(fmt.Sprintf("**shard %d's history** (%s owned it before the kill)", r.Watched.Shard, r.Killed))
	lab.ShowTable([]string{"operation", "worker", "token", "took over"}, HistoryRows(r.Watched))
	if r.Handover.Holder == "" {
		lab.Markdown(fmt.Sprintf("The history shows no handover from %s: its last entries were overwritten (it keeps %d).", r.Killed, fleet.HistoryMax))
		return
	}
	lab.Markdown(fmt.Sprintf("%s took shard %d over with token %d, %s ms after %s's lease on it ended.",
		r.Handover.Holder, r.Watched.Shard, r.Handover.Token, format.Int(r.Handover.AtMS-r.Handover.PrevUntilMS), r.Killed))
}

// countOwners is the number of distinct live owners at `at`.
func countOwners(states []fleet.ShardState, at time.Time) int {
	seen := map[string]bool{}
	for _, s := range states {
		if s.Holder != "" && s.UntilMS > at.UnixMilli() {
			seen[s.Holder] = true
		}
	}
	return len(seen)
}

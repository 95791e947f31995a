package fleet

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit/fence"
	"github.com/nightqueue/workshop/queuekit/internal/awsapi/dynamo"
)

// shardKey is the key of shard k's item.
func shardKey(k int) map[string]types.AttributeValue { return key("SHARD", fmt.Sprintf("%04d", k)) }

// Tenure is one entry of a shard's ownership history.
type Tenure struct {
	Token  int64  `dynamodbav:"t" json:"token"`
	Holder string `dynamodbav:"h" json:"holder"`
	Op     string `dynamodbav:"op" json:"op"` // "acquire" or "release"
	AtMS   int64  `dynamodbav:"at" json:"at_ms"`
	// PrevUntilMS is, for an acquire, the lease end of the tenure it took
	// over (0: the shard was free).
	PrevUntilMS int64 `dynamodbav:"prev_until" json:"prev_until_ms"`
}

// ShardState is one shard item as read.
type ShardState struct {
	Shard   int      `dynamodbav:"shard" json:"shard"`
	Token   int64    `dynamodbav:"fence_token" json:"token"`
	Holder  string   `dynamodbav:"holder" json:"holder"`
	UntilMS int64    `dynamodbav:"lease_until" json:"until_ms"`
	History []Tenure `dynamodbav:"history" json:"history"`
	// WantedBy names a worker that owns fewer shards and asked for this
	// one, owning WantLoad; the owner gives it back at its next rebalance
	// when it owns at least WantLoad+2.
	WantedBy string `dynamodbav:"wanted_by,omitempty" json:"wanted_by,omitempty"`
	WantLoad int    `dynamodbav:"want_load,omitempty" json:"want_load,omitempty"`
}

const (
	attrWant     = "wanted_by"
	attrWantLoad = "want_load"
)

// ShardStates reads every shard item with one Query (pk = SHARD), strongly
// consistent.
func (f *Fleet) ShardStates(ctx context.Context) ([]ShardState, error) {
	out, _, err := f.shardStates(ctx)
	return out, err
}

// shardRead is what one read of the shard items cost: requests (pages) and
// the read units DynamoDB reported.
type shardRead struct {
	requests int
	units    float64
}

func (f *Fleet) shardStates(ctx context.Context) ([]ShardState, shardRead, error) {
	kc, err := partition("SHARD")
	if err != nil {
		return nil, shardRead{}, fmt.Errorf("read shard items: %w", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: kc.KeyCondition(), ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values(),
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
	var out []ShardState
	var cost shardRead
	for page, err := range f.db.QueryPages(ctx, in) {
		if err != nil {
			return nil, cost, fmt.Errorf("read shard items: %w", err)
		}
		cost.requests++
		if page.ConsumedCapacity != nil {
			cost.units += aws.ToFloat64(page.ConsumedCapacity.CapacityUnits)
		}
		for _, it := range page.Items {
			var s ShardState
			if err := attributevalue.UnmarshalMap(it, &s); err != nil {
				return nil, cost, fmt.Errorf("shard item %v: %w", it[AttrSK], err)
			}
			sk, _ := it[AttrSK].(*types.AttributeValueMemberS)
			if sk != nil {
				s.Shard, _ = strconv.Atoi(sk.Value)
			}
			out = append(out, s)
		}
	}
	return out, cost, nil
}

// HistoryMax bounds a shard item's ownership history: an acquire keeps
// the last HistoryMax-1 entries it read and adds its own, a release adds
// one, so the item never holds more than HistoryMax+1 entries (about 60
// bytes each) and a renewal, which pays write units for the whole item,
// stays at one unit.
const HistoryMax = 8

// acquireShard takes shard k at the state seen: condition At(seen.Token)
// and the shard free or its lease exactly as seen (the caller found it
// stale, or its owner released it). It
// rewrites the history as the last entries seen plus its own acquire, and
// clears a want (see want). The lease's clock starts before the call.
func (f *Fleet) acquireShard(ctx context.Context, w *writes, k int, seen ShardState, holder string) (fence.Hold, time.Time, error) {
	now := f.now()
	sent := time.Now()
	step := jobFence.Acquire(fence.Token(seen.Token), holder, now.Add(f.opts.ShardLease))
	cond := step.Cond.And(expression.AttributeNotExists(n(jobFence.Holder)))
	if seen.Holder != "" {
		cond = step.Cond.And(n(attrUntil).Equal(v(seen.UntilMS)))
	}
	hist := append(trimHistory(seen.History, HistoryMax-1), Tenure{Token: int64(step.Hold.Token), Holder: holder, Op: "acquire", AtMS: now.UnixMilli(), PrevUntilMS: prevUntil(seen)})
	entries, err := attributevalue.MarshalList(hist)
	if err != nil {
		return fence.Hold{}, sent, err
	}
	nonce := newNonce()
	upd := step.Update.Set(n("history"), v(&types.AttributeValueMemberL{Value: entries})).
		Set(n("shard"), v(k)).Set(n(attrNonce), v(nonce)).Remove(n(attrWant)).Remove(n(attrWantLoad))
	_, err = f.update(ctx, w, shardKey(k), cond, upd)
	if _, ok := landed(err, nonce); ok {
		w.refused--
		w.landed++
		err = nil
	}
	return step.Hold, sent, err
}

// trimHistory is the last max entries of h, never starting with a
// release (whose acquire was trimmed away).
func trimHistory(h []Tenure, max int) []Tenure {
	if len(h) > max {
		h = h[len(h)-max:]
	}
	for len(h) > 0 && h[0].Op == "release" {
		h = h[1:]
	}
	return slices.Clone(h)
}

// want marks shard k, held by another worker at the token seen, as wanted
// by holder, which owns load shards: its owner gives it back at its next
// rebalance when it owns at least load+2. A want never moves the lease.
func (f *Fleet) want(ctx context.Context, w *writes, k int, seen ShardState, holder string, load int) error {
	upd := expression.Set(n(attrWant), v(holder)).Set(n(attrWantLoad), v(load))
	_, err := f.update(ctx, w, shardKey(k), jobFence.At(fence.Token(seen.Token)), upd)
	return err
}

func prevUntil(s ShardState) int64 {
	if s.Holder == "" {
		return 0
	}
	return s.UntilMS
}

// renewShard is the heartbeat of a shard lease.
func (f *Fleet) renewShard(w *writes, k int, h fence.Hold) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		step := jobFence.Renew(h, until)
		_, err := f.update(ctx, w, shardKey(k), step.Cond, step.Update)
		return jobFence.Check(err, "renew shard "+strconv.Itoa(k), h)
	}
}

// releaseShard gives shard k back: condition Held(h), the token moves on,
// and a release entry is appended.
func (f *Fleet) releaseShard(ctx context.Context, w *writes, k int, h fence.Hold) error {
	step := jobFence.Release(h)
	entry, err := attributevalue.MarshalList([]Tenure{{Token: int64(h.Token), Holder: h.Holder, Op: "release", AtMS: f.now().UnixMilli()}})
	if err != nil {
		return err
	}
	nonce := newNonce()
	upd := step.Update.Set(n("history"), expression.ListAppend(n("history"), v(&types.AttributeValueMemberL{Value: entry}))).
		Set(n(attrNonce), v(nonce))
	_, err = f.update(ctx, w, shardKey(k), step.Cond, upd)
	if _, ok := landed(err, nonce); ok {
		w.refused--
		w.landed++
		return nil
	}
	return jobFence.Check(err, "release shard "+strconv.Itoa(k), h)
}

// Assign is a static shard assignment over known members: shard k goes to
// members[k mod len(members)] (members sorted). Workers no longer use it
// (it needs every member's name, an O(N) read per rebalance); they balance
// from the shard items alone (see the package doc). It shows the counts a
// balanced fleet reaches: floor(K/n) or ceil(K/n) shards each.
func Assign(members []string, shards int, name string) []int {
	idx := sort.SearchStrings(members, name)
	if idx >= len(members) || members[idx] != name {
		return nil
	}
	var mine []int
	for k := idx; k < shards; k += len(members) {
		mine = append(mine, k)
	}
	return mine
}

// join starts a fresh membership tenure of name: one UpdateItem moves the
// MEMBER item's token on (whatever was there: a restarted worker of the
// same name fences its previous incarnation's renewals), names the holder
// and sets the lease's end.
func (f *Fleet) join(ctx context.Context, w *writes, name string) (fence.Hold, time.Time, error) {
	now := f.now()
	upd := expression.Set(n(jobFence.Token), expression.Plus(expression.IfNotExists(n(jobFence.Token), v(0)), v(1))).
		Set(n(jobFence.Holder), v(name)).Set(n(jobFence.Until), v(now.Add(f.opts.ShardLease).UnixMilli())).
		Set(n(AttrExpires), v(expiresAt(now)))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return fence.Hold{}, now, err
	}
	w.requests++
	out, err := f.db.UpdateItem(ctx, key("MEMBER", name), expr, func(in *dynamodb.UpdateItemInput) {
		in.ReturnValues = types.ReturnValueAllNew
	})
	if err != nil {
		return fence.Hold{}, now, fmt.Errorf("join the fleet as %s: %w", name, err)
	}
	return jobFence.HoldOf(out.Attributes), now, nil
}

// renewMember is the heartbeat of the membership lease.
func (f *Fleet) renewMember(w *writes, h fence.Hold) fence.Beat {
	return func(ctx context.Context, until time.Time) error {
		step := jobFence.Renew(h, until)
		_, err := f.update(ctx, w, key("MEMBER", h.Holder), step.Cond, step.Update.Set(n(AttrExpires), v(expiresAt(until))))
		return jobFence.Check(err, "renew membership", h)
	}
}

// AttrExpires is the fleet table's TTL attribute (Unix seconds): a MEMBER
// item carries it, MemberTTL after its last renewal, so the items of
// workers that died (SIGKILL leaves its item behind) are deleted by
// DynamoDB's TTL sweep. No read of the fleet depends on MEMBER items.
const AttrExpires = "expires_at"

// MemberTTL is how long after its last renewal a MEMBER item expires.
const MemberTTL = time.Hour

func expiresAt(t time.Time) int64 { return t.Add(MemberTTL).Unix() }

// leave ends the membership: the MEMBER item is deleted, on condition that
// it is still this tenure's (a newer incarnation of the same name keeps
// its own).
func (f *Fleet) leave(ctx context.Context, w *writes, h fence.Hold) error {
	expr, err := expression.NewBuilder().WithCondition(jobFence.Held(h)).Build()
	if err != nil {
		return err
	}
	w.requests++
	_, err = dynamo.Call(ctx, f.db, func(ctx context.Context) (*dynamodb.DeleteItemOutput, error) {
		return f.client().DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(f.Table()), Key: key("MEMBER", h.Holder),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	})
	return jobFence.Check(err, "leave", h)
}

// Members reads the MEMBER items as they are, live or not: a member that
// died keeps its item until the TTL (AttrExpires) deletes it. For
// inspection and tests: no worker reads them.
func (f *Fleet) Members(ctx context.Context) ([]Member, error) {
	kc, err := partition("MEMBER")
	if err != nil {
		return nil, fmt.Errorf("read members: %w", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(f.Table()), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: kc.KeyCondition(), ExpressionAttributeNames: kc.Names(), ExpressionAttributeValues: kc.Values()}
	var out []Member
	for page, err := range f.db.QueryPages(ctx, in) {
		if err != nil {
			return nil, fmt.Errorf("read members: %w", err)
		}
		var ms []Member
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &ms); err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// Member is one MEMBER item.
type Member struct {
	Name      string `dynamodbav:"holder" json:"name"`
	Token     int64  `dynamodbav:"fence_token" json:"token"`
	UntilMS   int64  `dynamodbav:"lease_until" json:"until_ms"`
	ExpiresAt int64  `dynamodbav:"expires_at" json:"expires_at"`
}

// Package fence holds the mechanics of a fenced lease on a DynamoDB item:
// a fencing token, the condition and update expressions that make every
// write of a holder depend on it, the classification of a refused write as
// fenced, and a heartbeat loop that stops the work the moment the lease is
// lost.
//
// # The invariant
//
// A lease lives on one item as three attributes: the token (a number), the
// holder (a name) and the lease's end (Unix milliseconds). The token changes
// every time the lease changes hands: when it is granted (Acquire), given
// back (Release) or taken away (Revoke, the reaper's write once the lease has
// expired). Every write a holder makes while it holds the lease (a
// heartbeat, a progress write, its end) carries the condition
//
//	token = :token AND holder = :holder
//
// with the token its grant returned. So once the lease has been taken away
// or given back, every later write of the old holder is refused by
// DynamoDB, whoever sends it, however late, whatever the holder believes: a
// holder paused past its lease (a GC pause, a laptop lid, a VM migration)
// learns at its next write that it lost the lease, and changes nothing.
// That is the argument of Kleppmann's "How to do distributed locking": a
// lease alone cannot stop a holder that does not know it lost it; the
// storage must refuse it, and a token that only grows lets the storage
// tell the old holder from the new.
//
// Two holders can never both write under the lease: a grant is conditioned
// on the token it read (At), and moves it on, so of two grants read at the
// same token at most one commits; the loser's later writes name a token
// that is not on the item.
//
// What the token does not give: the holder's work itself may have run
// after its lease ended (it learns only at its next write), so work done
// under a lease is at least once; only the writes fenced by the token
// (typically the one that ends the work) happen exactly once.
//
// # Using it
//
// The helpers return condition and update builders of the SDK's expression
// package, so a caller adds its own conditions (And) and updates (Set, Add,
// Remove) and builds one expression, for an UpdateItem or for one Update of
// a TransactWriteItems. A refused write is classified with Fence.Check,
// which returns an error matching ErrFenced only when it was the fencing
// condition that refused it (per item of a transaction, and by the item's
// old image when ReturnValuesOnConditionCheckFailure is ALL_OLD). Keep runs
// the heartbeat while the work runs.
package fence

import (
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Token is a fencing token: the number of times the lease on an item has
// changed hands. 0 is the token of an item whose lease was never granted
// (the attribute may be missing).
type Token int64

// Next is the token after t.
func (t Token) Next() Token { return t + 1 }

// String is the token in decimal.
func (t Token) String() string { return strconv.FormatInt(int64(t), 10) }

// Hold is one tenure of a lease: who holds it, at which token.
type Hold struct {
	Holder string
	Token  Token
}

// Fence names the attributes that carry a lease on an item.
type Fence struct {
	Token  string // the fencing token, a number (required)
	Holder string // the holder's name, a string (required)
	Until  string // the lease's end in Unix milliseconds, a number ("" : none kept)
}

// Default is the attribute naming of a lease on its own item.
var Default = Fence{Token: "fence_token", Holder: "holder", Until: "lease_until"}

// Step is what one write of a lease adds to a write: a condition for the
// caller to And its own onto, an update to add its own actions to, and the
// hold the item is in once the write commits (zero after Release or
// Revoke). Each step's builders are fresh; use them for one write.
type Step struct {
	Cond   expression.ConditionBuilder
	Update expression.UpdateBuilder
	Hold   Hold
}

// At is the condition that the item's token is t: the lease has not
// changed hands since the token t was read. For t = 0 a missing token
// attribute matches too.
func (f Fence) At(t Token) expression.ConditionBuilder {
	c := expression.Name(f.Token).Equal(expression.Value(int64(t)))
	if t == 0 {
		c = expression.AttributeNotExists(expression.Name(f.Token)).Or(c)
	}
	return c
}

// Held is the condition of every write of holder h: the item's token and
// holder are still h's.
func (f Fence) Held(h Hold) expression.ConditionBuilder {
	return expression.Name(f.Token).Equal(expression.Value(int64(h.Token))).
		And(expression.Name(f.Holder).Equal(expression.Value(h.Holder)))
}

// Expired is the condition that the lease's end is before now (an item
// without the Until attribute does not match). It needs f.Until.
func (f Fence) Expired(now time.Time) expression.ConditionBuilder {
	return expression.Name(f.Until).LessThan(expression.Value(now.UnixMilli()))
}

// Acquire grants the lease to holder: condition At(seen) (the caller adds
// what makes the item free to take: its state, an expired lease), and sets
// the token to seen+1, the holder, and the lease's end to until (when f
// keeps one and until is not zero). The returned Hold names the new tenure.
func (f Fence) Acquire(seen Token, holder string, until time.Time) Step {
	h := Hold{Holder: holder, Token: seen.Next()}
	u := expression.Set(expression.Name(f.Token), expression.Value(int64(h.Token))).
		Set(expression.Name(f.Holder), expression.Value(holder))
	if f.Until != "" && !until.IsZero() {
		u = u.Set(expression.Name(f.Until), expression.Value(until.UnixMilli()))
	}
	return Step{Cond: f.At(seen), Update: u, Hold: h}
}

// Renew is a heartbeat of h: condition Held(h), and the lease's end set to
// until (f.Until must be set).
func (f Fence) Renew(h Hold, until time.Time) Step {
	return Step{Cond: f.Held(h),
		Update: expression.Set(expression.Name(f.Until), expression.Value(until.UnixMilli())), Hold: h}
}

// Write is any other write of h that keeps the lease (a progress or state
// write): condition Held(h), and an empty update for the caller's actions.
// The update has no action of its own: add at least one before building.
func (f Fence) Write(h Hold) Step {
	return Step{Cond: f.Held(h), Update: expression.UpdateBuilder{}, Hold: h}
}

// Release gives the lease back at the end of h's work: condition Held(h);
// the token moves on to h.Token+1, the holder and the lease's end are
// removed, so any later write of h is refused.
func (f Fence) Release(h Hold) Step {
	return Step{Cond: f.Held(h), Update: f.clear(h.Token.Next())}
}

// Revoke takes the lease away from whoever holds it at token seen (the
// reaper's write, once the lease expired): condition At(seen) (the caller
// adds Expired, or the lease end it saw); the token moves on, the holder
// and the lease's end are removed, so the old holder's next write is
// refused.
func (f Fence) Revoke(seen Token) Step {
	return Step{Cond: f.At(seen), Update: f.clear(seen.Next())}
}

func (f Fence) clear(next Token) expression.UpdateBuilder {
	u := expression.Set(expression.Name(f.Token), expression.Value(int64(next))).
		Remove(expression.Name(f.Holder))
	if f.Until != "" {
		u = u.Remove(expression.Name(f.Until))
	}
	return u
}

// HoldOf reads the hold recorded on an item (for example the old image a
// refused write returns): its holder ("" when free) and token (0 when
// missing).
func (f Fence) HoldOf(item map[string]types.AttributeValue) Hold {
	var h Hold
	if s, ok := item[f.Holder].(*types.AttributeValueMemberS); ok {
		h.Holder = s.Value
	}
	if n, ok := item[f.Token].(*types.AttributeValueMemberN); ok {
		if v, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
			h.Token = Token(v)
		}
	}
	return h
}

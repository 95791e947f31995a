package fence

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// ErrFenced is matched (errors.Is) by every error saying that a holder's
// write was refused because the lease had passed to another tenure: its
// token or holder on the item is no longer the holder's.
var ErrFenced = errors.New("fenced: the lease changed hands")

// ErrExpired is matched by the loss of a lease that could not be renewed
// before it ran out (DynamoDB slow or unreachable): nobody may have taken
// it yet, but the holder can no longer prove it holds it.
var ErrExpired = errors.New("lease expired: it could not be renewed in time")

// Lost reports whether err is the loss of a lease: fenced or expired.
func Lost(err error) bool { return errors.Is(err, ErrFenced) || errors.Is(err, ErrExpired) }

// FencedError is a holder's write refused by its fencing condition.
type FencedError struct {
	Op   string // what the holder tried, e.g. "heartbeat", "end"
	Hold Hold   // the tenure it wrote under
	// Now is the hold recorded on the item when the refusal returned the
	// item's old image (ReturnValuesOnConditionCheckFailure ALL_OLD); zero
	// otherwise.
	Now Hold
	Err error // the SDK's error
}

func (e *FencedError) Error() string {
	now := ""
	if e.Now != (Hold{}) {
		holder := e.Now.Holder
		if holder == "" {
			holder = "nobody"
		}
		now = fmt.Sprintf(" (the item is at token %s, held by %s)", e.Now.Token, holder)
	}
	return fmt.Sprintf("%s fenced: %s no longer holds the lease of token %s%s", e.Op, e.Hold.Holder, e.Hold.Token, now)
}

// Is matches ErrFenced.
func (e *FencedError) Is(target error) bool { return target == ErrFenced }

// Unwrap returns the SDK's error.
func (e *FencedError) Unwrap() error { return e.Err }

// Refused reports whether err says that a condition refused a write: a
// *types.ConditionalCheckFailedException (one item), or a
// *types.TransactionCanceledException whose cancellation reasons name
// ConditionalCheckFailed, for one of the items at the given indexes of the
// transaction (any item when none is given).
func Refused(err error, items ...int) bool {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return true
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		return false
	}
	if len(tce.CancellationReasons) == 0 { // no reasons: only the message can tell
		return len(items) == 0 && strings.Contains(tce.ErrorMessage(), "ConditionalCheckFailed")
	}
	for i, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "ConditionalCheckFailed" && (len(items) == 0 || contains(items, i)) {
			return true
		}
	}
	return false
}

// Conflict reports whether err is a transaction conflict: another
// transaction was writing the same item at the same time
// (*types.TransactionConflictException, or a cancelled transaction with a
// TransactionConflict reason and no failed condition). It says nothing about
// the lease: send the write again.
func Conflict(err error) bool {
	var tcx *types.TransactionConflictException
	if errors.As(err, &tcx) {
		return true
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || Refused(err) {
		return false
	}
	for _, r := range tce.CancellationReasons {
		if aws.ToString(r.Code) == "TransactionConflict" {
			return true
		}
	}
	return false
}

// Check classifies the error of a write of holder h: nil stays nil; a
// refusal of the holder's item (Refused(err, items...); items are the
// indexes of the fenced item in a transaction, none for one UpdateItem)
// becomes a *FencedError (errors.Is(err, ErrFenced)); any other error is
// returned unchanged.
//
// When the refusal carries the item's old image
// (ReturnValuesOnConditionCheckFailure ALL_OLD) and that image shows h
// still holding the lease, the refusal came from another condition of the
// caller's, not from the fence, and err is returned unchanged. Without an
// old image, every refusal of the item counts as fenced.
func (f Fence) Check(err error, op string, h Hold, items ...int) error {
	if err == nil || !Refused(err, items...) {
		return err
	}
	var old map[string]types.AttributeValue
	var ccf *types.ConditionalCheckFailedException
	var tce *types.TransactionCanceledException
	switch {
	case errors.As(err, &ccf):
		old = ccf.Item
	case errors.As(err, &tce):
		for i, r := range tce.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" && (len(items) == 0 || contains(items, i)) && r.Item != nil {
				old = r.Item
				break
			}
		}
	}
	fe := &FencedError{Op: op, Hold: h, Err: err}
	if old != nil {
		fe.Now = f.HoldOf(old)
		if fe.Now == h {
			return err
		}
	}
	return fe
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

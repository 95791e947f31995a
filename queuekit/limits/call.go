package limits

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/crc32"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/nightqueue/workshop/queuekit/internal/wait"
)

// call is one request the layer meters.
type call struct {
	l    *Layer
	op   string
	req  *request
	r    *http.Request
	w    http.ResponseWriter
	body []byte
}

// charge is units taken from one index's limits and one of its partitions
// (part -1: spread over every partition, as a Scan reads them all).
type charge struct {
	t     *table
	ix    *index
	part  int
	read  bool
	units float64
}

// itemOp is one item of a call: what it does and the item before.
type itemOp struct {
	kind    string // put, update, delete, check, get
	t       *table
	key     string
	keyItem Item
	item    Item // put: the new image
	old     Item
	known   bool // old is the item as stored (nil: no item)
	factor  float64
	est     []charge
	raw     json.RawMessage
	table   string
	cons    bool
	// updates names the attributes an UpdateItem's expression names.
	updates map[string]bool
}

func (c *call) serve() {
	l := c.l
	ctx := c.r.Context()
	auth := c.r.Header.Get("Authorization")
	switch c.op {
	case "CreateTable", "UpdateTable":
		if !validMode(c.req.BillingMode) {
			writeError(c.w, badMode(c.req.BillingMode))
			return
		}
		if c.op == "UpdateTable" {
			if err := l.learn(ctx, auth, c.req.TableName); err == nil && onlyWarm(c.body) {
				c.warmOnly(ctx, auth)
				return
			}
		}
		rec := c.forward(c.body)
		defer c.reply(rec)
		if rec.status == http.StatusOK {
			l.mu.Lock()
			if c.op == "CreateTable" {
				l.created(c.req, l.opts.Now())
			} else {
				l.updated(c.req, l.opts.Now())
			}
			l.mu.Unlock()
		}
		return
	case "DeleteTable":
		rec := c.forward(c.body)
		defer c.reply(rec)
		if rec.status == http.StatusOK {
			l.mu.Lock()
			delete(l.tables, c.req.TableName)
			l.mu.Unlock()
		}
		return
	}
	for _, n := range c.req.tableNames() {
		if err := l.learn(ctx, auth, n); err != nil {
			if errors.Is(err, errNoTable) {
				c.reply(c.forward(c.body)) // DynamoDB Local answers: no such table
			} else {
				closeConnection(c.w, c.r, err)
			}
			return
		}
	}
	ops, ok := c.items()
	if !ok {
		c.reply(c.forward(c.body)) // something the layer cannot read: Local answers it
		return
	}
	c.preread(ctx, auth, ops)
	switch c.op {
	case "PutItem", "UpdateItem", "DeleteItem":
		c.single(ctx, auth, ops[0])
	case "GetItem":
		c.get(ops[0])
	case "Query", "Scan":
		c.query()
	case "BatchWriteItem", "BatchGetItem":
		c.batch(ops)
	case "TransactWriteItems", "TransactGetItems":
		c.transact(ctx, auth, ops)
	}
}

// items lists the items a call reads or writes (none for Query and Scan).
func (c *call) items() ([]*itemOp, bool) {
	l, req := c.l, c.req
	l.mu.Lock()
	defer l.mu.Unlock()
	mk := func(kind, tname string, key, item wireItem, factor float64, cons bool) *itemOp {
		t := l.tables[tname]
		if t == nil {
			return nil
		}
		raw := key
		if raw == nil {
			raw = item
		}
		it, err := decodeItem(raw)
		if err != nil {
			return nil
		}
		k := keyOf(it, t.base.pk, t.base.sk)
		if k == "" {
			return nil
		}
		op := &itemOp{kind: kind, t: t, key: k, keyItem: it, factor: factor, table: tname, cons: cons}
		if kind == "put" {
			op.item = it
		}
		return op
	}
	var ops []*itemOp
	add := func(op *itemOp) bool { ops = append(ops, op); return op != nil }
	switch c.op {
	case "PutItem":
		return ops, add(mk("put", req.TableName, nil, req.Item, 1, false))
	case "UpdateItem":
		op := mk("update", req.TableName, req.Key, nil, 1, false)
		if op != nil {
			op.updates = req.updatedNames()
		}
		return ops, add(op)
	case "DeleteItem":
		return ops, add(mk("delete", req.TableName, req.Key, nil, 1, false))
	case "GetItem":
		return ops, add(mk("get", req.TableName, req.Key, nil, 1, req.ConsistentRead))
	case "Query", "Scan":
		return nil, l.tables[req.TableName] != nil
	case "BatchWriteItem":
		for _, name := range slices.Sorted(maps.Keys(req.RequestItems)) {
			var entries []struct {
				PutRequest    *struct{ Item wireItem }
				DeleteRequest *struct{ Key wireItem }
			}
			var raws []json.RawMessage
			if json.Unmarshal(req.RequestItems[name], &entries) != nil || json.Unmarshal(req.RequestItems[name], &raws) != nil {
				return nil, false
			}
			for i, e := range entries {
				var op *itemOp
				switch {
				case e.PutRequest != nil:
					op = mk("put", name, nil, e.PutRequest.Item, 1, false)
				case e.DeleteRequest != nil:
					op = mk("delete", name, e.DeleteRequest.Key, nil, 1, false)
				}
				if !add(op) {
					return nil, false
				}
				op.raw = raws[i]
			}
		}
	case "BatchGetItem":
		for _, name := range slices.Sorted(maps.Keys(req.RequestItems)) {
			var g struct {
				Keys           []wireItem
				ConsistentRead bool
			}
			var raw struct{ Keys []json.RawMessage }
			if json.Unmarshal(req.RequestItems[name], &g) != nil || json.Unmarshal(req.RequestItems[name], &raw) != nil {
				return nil, false
			}
			for i, k := range g.Keys {
				op := mk("get", name, k, nil, 1, g.ConsistentRead)
				if !add(op) {
					return nil, false
				}
				op.raw = raw.Keys[i]
			}
		}
	case "TransactWriteItems", "TransactGetItems":
		for _, ti := range req.TransactItems {
			var op *itemOp
			switch {
			case ti.Put != nil:
				op = mk("put", ti.Put.TableName, nil, ti.Put.Item, 2, false)
			case ti.Update != nil:
				op = mk("update", ti.Update.TableName, ti.Update.Key, nil, 2, false)
			case ti.Delete != nil:
				op = mk("delete", ti.Delete.TableName, ti.Delete.Key, nil, 2, false)
			case ti.ConditionCheck != nil:
				op = mk("check", ti.ConditionCheck.TableName, ti.ConditionCheck.Key, nil, 2, false)
			case ti.Get != nil:
				op = mk("get", ti.Get.TableName, ti.Get.Key, nil, 2, true)
			}
			if !add(op) {
				return nil, false
			}
		}
	}
	return ops, true
}

// preread learns the stored image of items the layer has not seen, in
// tables it did not see created (one GetItem each, not metered); in a
// table it saw created, an item it has not seen does not exist.
func (c *call) preread(ctx context.Context, auth string, ops []*itemOp) {
	l := c.l
	for _, op := range ops {
		l.mu.Lock()
		img, ok := op.t.images[op.key]
		complete := op.t.complete
		l.mu.Unlock()
		if ok || complete {
			op.old, op.known = img, true
			continue
		}
		if op.kind == "get" {
			continue // the answer tells
		}
		img, err := l.fetch(ctx, auth, op.table, op.t, op.keyItem)
		if err != nil {
			continue
		}
		op.old, op.known = img, true
		l.mu.Lock()
		op.t.images[op.key] = img
		l.mu.Unlock()
	}
}

// fetch reads one item as stored (strongly consistent GetItem, not
// metered); nil when there is none.
func (l *Layer) fetch(ctx context.Context, auth, tname string, t *table, key Item) (Item, error) {
	k := map[string]json.RawMessage{}
	for _, a := range []string{t.base.pk, t.base.sk} {
		if a == "" {
			continue
		}
		b, err := encodeValue(key[a])
		if err != nil {
			return nil, err
		}
		k[a] = b
	}
	status, body, err := l.internal(ctx, auth, "GetItem", map[string]any{"TableName": tname, "Key": k, "ConsistentRead": true})
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, errors.New(string(body))
	}
	var out struct{ Item wireItem }
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	return decodeItem(out.Item)
}

// entry is an item's entry in a GSI (its projection), or nil when the
// item lacks the index's key.
func entry(img Item, ix *index, t *table) Item {
	if img == nil || scalar(img[ix.pk]) == "" || (ix.sk != "" && scalar(img[ix.sk]) == "") {
		return nil
	}
	return project(img, ix, t)
}

// writeCharges is what one write from old to new costs: the table's write
// units (the larger image, per KB, times factor: 2 in a transaction) and,
// per GSI, a put of the new entry, a delete of the old one, or both when
// the index key changed.
func writeCharges(t *table, key, old, new Item, factor float64) []charge {
	b := t.base
	pkv := scalar(key[b.pk])
	chs := []charge{{t, b, b.partition(pkv), false, WriteUnits(max(size(old), size(new))) * factor}}
	for _, name := range slices.Sorted(maps.Keys(t.gsis)) {
		ix := t.gsis[name]
		o, n := entry(old, ix, t), entry(new, ix, t)
		put := func(e Item) {
			chs = append(chs, charge{t, ix, ix.partition(scalar(e[ix.pk])), false, WriteUnits(size(e))})
		}
		switch {
		case o == nil && n == nil:
		case o == nil:
			put(n)
		case n == nil:
			put(o)
		case keyOf(o, ix.pk, ix.sk) != keyOf(n, ix.pk, ix.sk):
			put(o)
			put(n)
		case !sameValues(o, n):
			put(n)
		}
	}
	return chs
}

func readCharge(t *table, key Item, n int, consistent bool, factor float64) charge {
	b := t.base
	return charge{t, b, b.partition(scalar(key[b.pk])), true, ReadUnits(n, consistent) * factor}
}

// estimate is what the layer charges before the answer: exact for puts,
// deletes and reads of known items; an update is estimated as rewriting
// the item as it is (its change is charged when the answer comes), plus,
// for an UpdateItem whose expression names an attribute of the item's
// entry in a GSI, a write of that entry on its partition: AWS writes the
// index for such an update, so a dry index partition throttles it.
func (op *itemOp) estimate() []charge {
	switch op.kind {
	case "put":
		return writeCharges(op.t, op.keyItem, op.old, op.item, op.factor)
	case "update":
		cur := op.old
		if cur == nil {
			cur = op.keyItem
		}
		chs := writeCharges(op.t, op.keyItem, op.old, cur, op.factor)
		for _, name := range slices.Sorted(maps.Keys(op.t.gsis)) {
			ix := op.t.gsis[name]
			e := entry(op.old, ix, op.t)
			if e == nil || !namesAny(op.updates, e) {
				continue
			}
			chs = append(chs, charge{op.t, ix, ix.partition(scalar(e[ix.pk])), false, WriteUnits(size(e))})
		}
		return chs
	case "delete":
		return writeCharges(op.t, op.keyItem, op.old, nil, op.factor)
	case "check":
		b := op.t.base
		return []charge{{op.t, b, b.partition(scalar(op.keyItem[b.pk])), false, WriteUnits(size(op.old)) * op.factor}}
	}
	return []charge{readCharge(op.t, op.keyItem, size(op.old), op.cons, op.factor)}
}

// namesAny reports whether names holds an attribute of e.
func namesAny(names map[string]bool, e Item) bool {
	for a := range e {
		if names[a] {
			return true
		}
	}
	return false
}

// buckets calls f with every bucket a charge draws from, the reason it
// would give and the units it takes from that bucket.
func (l *Layer) buckets(ch charge, f func(b *bucket, reason Reason, units float64)) {
	res, what := "Table", "Write"
	if ch.ix.name != "" {
		res = "Index"
	}
	if ch.read {
		what = "Read"
	}
	for _, lim := range ch.ix.limits {
		b := lim.write
		if ch.read {
			b = lim.read
		}
		if b != nil {
			f(b, Reason{res + what + lim.kind, ch.ix.arn}, ch.units)
		}
	}
	kr := Reason{res + what + "KeyRangeThroughputExceeded", ch.ix.arn}
	pick := func(p *part) *bucket {
		if ch.read {
			return p.read
		}
		return p.write
	}
	if ch.part >= 0 && ch.part < len(ch.ix.parts) {
		f(pick(ch.ix.parts[ch.part]), kr, ch.units)
		return
	}
	for _, p := range ch.ix.parts {
		f(pick(p), kr, ch.units/float64(len(ch.ix.parts)))
	}
}

// admit takes est's units and reports true, l.mu still held; or, when a
// limit refuses them, counts the throttle, unlocks l.mu, answers the
// request as AWS does and reports false.
func (c *call) admit(now time.Time, table string, est []charge) bool {
	l := c.l
	if reasons := l.check(est, now); len(reasons) > 0 {
		l.throttled(now, table, est, reasons)
		l.mu.Unlock()
		writeError(c.w, throttleBody(reasons))
		return false
	}
	l.take(est, 1)
	return true
}

// check returns the reasons the charges would be throttled for (none:
// admitted), sorted.
func (l *Layer) check(chs []charge, now time.Time) []Reason {
	need := map[*bucket]float64{}
	why := map[*bucket]Reason{}
	for _, ch := range chs {
		l.buckets(ch, func(b *bucket, r Reason, u float64) { need[b] += u; why[b] = r })
	}
	seen := map[Reason]bool{}
	var out []Reason
	for b, u := range need {
		if !b.admits(now, u) && !seen[why[b]] {
			seen[why[b]] = true
			out = append(out, why[b])
		}
	}
	slices.SortFunc(out, func(a, b Reason) int {
		if a.Reason != b.Reason {
			return compare(a.Reason, b.Reason)
		}
		return compare(a.Resource, b.Resource)
	})
	return out
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// take debits the charges (sign 1) or credits them back (sign -1).
func (l *Layer) take(chs []charge, sign float64) {
	for _, ch := range chs {
		l.buckets(ch, func(b *bucket, _ Reason, u float64) { b.level = math.Min(b.capacity, b.level-sign*u) })
	}
}

// settle replaces the estimate by what the call cost, and counts it.
func (l *Layer) settle(est, actual []charge, now time.Time) {
	l.take(est, -1)
	l.take(actual, 1)
	for _, ch := range actual {
		u := Units{}
		if ch.read {
			u.Read = ch.units
		} else {
			u.Write = ch.units
		}
		s := l.stats.at(now, ch.t.name, ch.ix.name, -1)
		s.ReadUnits += u.Read
		s.WriteUnits += u.Write
		if ch.part >= 0 {
			p := l.stats.at(now, ch.t.name, ch.ix.name, ch.part)
			p.ReadUnits += u.Read
			p.WriteUnits += u.Write
		}
		ch.ix.record(now, u, l.opts.Scale)
	}
}

// counted counts one request of a table.
func (l *Layer) counted(now time.Time, tname string) { l.stats.at(now, tname, "", -1).Requests++ }

// throttled counts a throttled request under each of its reasons.
func (l *Layer) throttled(now time.Time, tname string, chs []charge, reasons []Reason) {
	for _, r := range reasons {
		for _, ch := range chs {
			if ch.ix.arn != r.Resource {
				continue
			}
			l.stats.throttle(now, ch.t.name, ch.ix.name, -1, r.Reason)
			if hasSuffix(r.Reason, "KeyRangeThroughputExceeded") && ch.part >= 0 {
				l.stats.throttle(now, ch.t.name, ch.ix.name, ch.part, r.Reason)
			}
			break
		}
	}
}

func heldKey(op *itemOp) string { return op.table + "\x00" + op.key }

// single serves PutItem, UpdateItem and DeleteItem.
func (c *call) single(ctx context.Context, auth string, op *itemOp) {
	l := c.l
	now := l.opts.Now()
	l.mu.Lock()
	l.counted(now, op.table)
	if l.txHeld[heldKey(op)] > 0 {
		l.stats.throttle(now, op.table, "", -1, "TransactionConflict")
		l.mu.Unlock()
		writeError(c.w, conflictBody())
		return
	}
	est := op.estimate()
	if !c.admit(now, op.table, est) {
		return
	}
	l.oneHeld[heldKey(op)]++
	l.mu.Unlock()

	var rec *recorder
	var newAttrs json.RawMessage
	if op.kind == "update" && (c.req.ReturnValues == "" || c.req.ReturnValues == "NONE") {
		rec, newAttrs = c.forwardAllNew()
	} else {
		rec = c.forward(c.body)
	}
	defer c.reply(rec)
	status, resp := rec.status, rec.buf.Bytes()
	newImg, newKnown := op.item, true
	switch {
	case status != http.StatusOK:
		newImg, newKnown = op.old, op.known
	case op.kind == "delete":
		newImg = nil
	case op.kind == "update" && newAttrs != nil:
		var m wireItem
		if json.Unmarshal(newAttrs, &m) == nil {
			if it, err := decodeItem(m); err == nil {
				newImg = it
				break
			}
		}
		newImg, newKnown = c.updatedImage(ctx, auth, op, resp)
	case op.kind == "update":
		newImg, newKnown = c.updatedImage(ctx, auth, op, resp)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.oneHeld[heldKey(op)]--
	if l.oneHeld[heldKey(op)] == 0 {
		delete(l.oneHeld, heldKey(op))
	}
	var actual []charge
	switch {
	case status == http.StatusOK:
		actual = writeCharges(op.t, op.keyItem, op.old, newImg, 1)
	case bytes.Contains(resp, []byte("ConditionalCheckFailedException")):
		b := op.t.base // a failed condition still costs the write of the item as it is
		actual = []charge{{op.t, b, b.partition(scalar(op.keyItem[b.pk])), false, WriteUnits(size(op.old))}}
	}
	if newKnown {
		op.t.images[op.key] = newImg
	} else {
		delete(op.t.images, op.key)
	}
	l.settle(est, actual, l.opts.Now())
}

// forwardAllNew forwards an UpdateItem that asked for no ReturnValues with
// ReturnValues ALL_NEW added, so the layer learns the item after the update
// without a second call, and takes the "Attributes" member back out of the
// answer: what the client receives is, byte for byte, what DynamoDB Local
// answers the request as sent (its members are written in the same order
// and form either way; the property test checks it). It returns the
// answer and the new image's JSON (nil when the answer was an error).
func (c *call) forwardAllNew() (*recorder, json.RawMessage) {
	body := c.withAllNew()
	if body == nil {
		return c.forward(c.body), nil
	}
	rec := c.forward(body)
	if rec.status != http.StatusOK || rec.dropped {
		return rec, nil
	}
	out := rec.buf.Bytes()
	var resp struct{ Attributes json.RawMessage }
	if json.Unmarshal(out, &resp) != nil || resp.Attributes == nil {
		return rec, nil
	}
	attrs := resp.Attributes
	member := append([]byte(`"Attributes":`), attrs...)
	i := bytes.Index(out, member)
	if i < 0 {
		return rec, nil // not the form expected: the layer reads it back instead
	}
	j := i + len(member)
	switch {
	case j < len(out) && out[j] == ',':
		j++
	case i > 0 && out[i-1] == ',':
		i--
	}
	cut := append(out[:i], out[j:]...) // in place in the buffer: j > i
	rec.buf.Truncate(len(cut))
	rec.h.Set("Content-Length", strconv.Itoa(len(cut)))
	if rec.h.Get("X-Amz-Crc32") != "" {
		rec.h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(cut)), 10))
	}
	return rec, attrs
}

// withAllNew is the request's body with ReturnValues ALL_NEW: the member
// inserted first when the request has none, or the whole body rewritten
// (members sorted) when it names ReturnValues; nil when it is not a JSON
// object.
func (c *call) withAllNew() []byte {
	if !bytes.Contains(c.body, []byte(`"ReturnValues"`)) {
		b := bytes.TrimLeft(c.body, " \t\r\n")
		if len(b) < 2 || b[0] != '{' {
			return nil
		}
		rest := bytes.TrimLeft(b[1:], " \t\r\n")
		if len(rest) == 0 {
			return nil
		}
		out := make([]byte, 0, len(c.body)+32)
		out = append(out, `{"ReturnValues":"ALL_NEW"`...)
		if rest[0] != '}' {
			out = append(out, ',')
		}
		return append(out, rest...)
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(c.body, &top) != nil {
		return nil
	}
	top["ReturnValues"] = json.RawMessage(`"ALL_NEW"`)
	body, err := json.Marshal(top)
	if err != nil {
		return nil
	}
	return body
}

// updatedImage is the item after an update: from the answer when it
// returned ALL_NEW, else read back (one GetItem, not metered).
func (c *call) updatedImage(ctx context.Context, auth string, op *itemOp, resp []byte) (Item, bool) {
	if c.req.ReturnValues == "ALL_NEW" {
		var out struct{ Attributes wireItem }
		if json.Unmarshal(resp, &out) == nil {
			if it, err := decodeItem(out.Attributes); err == nil && it != nil {
				return it, true
			}
		}
	}
	img, err := c.l.fetch(ctx, auth, op.table, op.t, op.keyItem)
	return img, err == nil
}

// get serves GetItem.
func (c *call) get(op *itemOp) {
	l := c.l
	now := l.opts.Now()
	l.mu.Lock()
	l.counted(now, op.table)
	est := op.estimate()
	if !c.admit(now, op.table, est) {
		return
	}
	l.mu.Unlock()
	rec := c.forward(c.body)
	defer c.reply(rec)
	status, resp := rec.status, rec.buf.Bytes()
	l.mu.Lock()
	defer l.mu.Unlock()
	var actual []charge
	if status == http.StatusOK {
		projected := c.req.ProjectionExpression != "" || len(c.req.AttributesToGet) > 0
		var n int
		switch {
		case projected && op.known:
			n = size(op.old) // a projection still reads the whole item
		case op.known && len(resp) <= readUnitBytes && (op.old != nil) == bytes.Contains(resp, []byte(`"Item":`)):
			// The item is the one the layer knows (there is one in the
			// answer as there is in the layer's image, or neither), and
			// smaller than the answer, which is smaller than 4 KB: one
			// read unit whatever its size, without decoding the answer.
			n = 0
		default:
			var out struct{ Item wireItem }
			_ = json.Unmarshal(resp, &out)
			img, err := decodeItem(out.Item)
			n = size(img)
			if projected && op.known {
				n = size(op.old)
			}
			if err == nil && !projected {
				op.t.images[op.key] = img
			}
		}
		actual = []charge{readCharge(op.t, op.keyItem, n, op.cons, 1)}
	}
	l.settle(est, actual, l.opts.Now())
}

// readUnitBytes is what one read unit reads (4 KB). An item's size by
// DynamoDB's rules (dynamo.ItemSize) is never more than its JSON (every
// name and value is at least as long in JSON), so an answer of at most
// readUnitBytes holds items worth one read unit (half when eventually
// consistent) whatever they are.
const readUnitBytes = 4096

// query serves Query and Scan: charged on the size of the items returned
// (rounded up to 4 KB once per call); a Query on its key's partition, a
// Scan over all partitions.
func (c *call) query() {
	l, req := c.l, c.req
	now := l.opts.Now()
	l.mu.Lock()
	t := l.tables[req.TableName]
	ix := t.index(req.IndexName)
	if ix == nil {
		l.mu.Unlock()
		c.reply(c.forward(c.body))
		return
	}
	l.counted(now, t.name)
	part := -1
	if c.op == "Query" {
		if pkv := req.queryKey(ix.pk); pkv != "" {
			part = ix.partition(pkv)
		}
	}
	est := []charge{{t, ix, part, true, ReadUnits(0, req.ConsistentRead)}}
	if !c.admit(now, t.name, est) {
		return
	}
	l.mu.Unlock()
	rec := c.forward(c.body)
	defer c.reply(rec)
	status, resp := rec.status, rec.buf.Bytes()
	l.mu.Lock()
	defer l.mu.Unlock()
	var actual []charge
	if status == http.StatusOK {
		projected := req.ProjectionExpression != "" || len(req.AttributesToGet) > 0 || req.Select == "COUNT"
		var out struct{ Items []wireItem }
		if projected || !t.complete || len(resp) > readUnitBytes {
			// Sizes to add up, or images to learn. Otherwise the items,
			// each no bigger than its JSON, add up to less than the
			// answer, which is under 4 KB: one read unit, whatever they
			// are, without decoding the answer.
			_ = json.Unmarshal(resp, &out)
		}
		n := 0
		for _, raw := range out.Items {
			it, err := decodeItem(raw)
			if err != nil {
				continue
			}
			k := keyOf(it, t.base.pk, t.base.sk)
			if old, ok := t.images[k]; projected && ok && k != "" {
				n += size(project(old, ix, t))
				continue
			}
			n += size(it)
			if !projected && k != "" && (ix == t.base || ix.projection == "ALL") {
				t.images[k] = it
			}
		}
		actual = []charge{{t, ix, part, true, ReadUnits(n, req.ConsistentRead)}}
	}
	l.settle(est, actual, l.opts.Now())
}

// recorder keeps the target's answer until the layer has counted it.
type recorder struct {
	h       http.Header
	status  int
	buf     *bytes.Buffer
	dropped bool // nothing answered: the client's connection is closed
}

// batch serves BatchWriteItem and BatchGetItem: items are admitted one by
// one; the throttled ones come back as UnprocessedItems (UnprocessedKeys),
// and when none is admitted the call fails with the throttling exception,
// as the API reference says for both.
func (c *call) batch(ops []*itemOp) {
	l := c.l
	now := l.opts.Now()
	l.mu.Lock()
	var admitted, refused []*itemOp
	var all []Reason
	var est []charge
	for i, op := range ops {
		if i == 0 || op.table != ops[i-1].table {
			l.counted(now, op.table)
		}
		e := op.estimate()
		if reasons := l.check(e, now); len(reasons) > 0 {
			l.throttled(now, op.table, e, reasons)
			refused = append(refused, op)
			all = append(all, reasons...)
			continue
		}
		l.take(e, 1)
		op.est = e
		est = append(est, e...)
		admitted = append(admitted, op)
	}
	l.mu.Unlock()
	if len(admitted) == 0 {
		writeError(c.w, throttleBody(dedupe(all)))
		return
	}
	var rec *recorder
	if len(refused) == 0 {
		rec = c.forward(c.body)
	} else {
		rec = c.forwardPart(admitted, refused)
	}
	defer c.reply(rec)
	status, resp := rec.status, rec.buf.Bytes()
	l.mu.Lock()
	defer l.mu.Unlock()
	var actual []charge
	if status == http.StatusOK {
		if c.op == "BatchGetItem" {
			var out struct {
				Responses map[string][]wireItem
			}
			_ = json.Unmarshal(resp, &out)
			found := map[string]Item{}
			for tname, items := range out.Responses {
				for _, raw := range items {
					if it, err := decodeItem(raw); err == nil {
						if t := l.tables[tname]; t != nil {
							found[tname+"\x00"+keyOf(it, t.base.pk, t.base.sk)] = it
						}
					}
				}
			}
			for _, op := range admitted {
				it := found[heldKey(op)]
				actual = append(actual, readCharge(op.t, op.keyItem, size(it), op.cons, 1))
			}
		} else {
			for _, op := range admitted {
				var img Item
				if op.kind == "put" {
					img = op.item
				}
				actual = append(actual, writeCharges(op.t, op.keyItem, op.old, img, 1)...)
				op.t.images[op.key] = img
			}
		}
	}
	l.settle(est, actual, l.opts.Now())
}

func dedupe(rs []Reason) []Reason {
	seen := map[Reason]bool{}
	var out []Reason
	for _, r := range rs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// forwardPart forwards the admitted items of a batch and answers the
// refused ones as unprocessed, merged with any DynamoDB Local left.
func (c *call) forwardPart(admitted, refused []*itemOp) *recorder {
	field, unField, list := "RequestItems", "UnprocessedItems", ""
	if c.op == "BatchGetItem" {
		unField, list = "UnprocessedKeys", "Keys"
	}
	group := func(ops []*itemOp) map[string]json.RawMessage {
		by := map[string][]json.RawMessage{}
		for _, op := range ops {
			by[op.table] = append(by[op.table], op.raw)
		}
		out := map[string]json.RawMessage{}
		for tname, raws := range by {
			if list == "" {
				out[tname], _ = json.Marshal(raws)
				continue
			}
			var m map[string]json.RawMessage // keep ConsistentRead, ProjectionExpression, ...
			_ = json.Unmarshal(c.req.RequestItems[tname], &m)
			m[list], _ = json.Marshal(raws)
			out[tname], _ = json.Marshal(m)
		}
		return out
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(c.body, &top)
	top[field], _ = json.Marshal(group(admitted))
	body, _ := json.Marshal(top)
	rec := c.forward(body)
	if rec.status != http.StatusOK {
		return rec
	}
	var resp map[string]json.RawMessage
	if json.Unmarshal(rec.buf.Bytes(), &resp) != nil {
		return rec
	}
	un := map[string]json.RawMessage{}
	_ = json.Unmarshal(resp[unField], &un)
	for tname, raw := range group(refused) {
		if prev, ok := un[tname]; ok && list == "" { // Local left some too
			var a, b []json.RawMessage
			_ = json.Unmarshal(prev, &a)
			_ = json.Unmarshal(raw, &b)
			raw, _ = json.Marshal(append(a, b...))
		}
		un[tname] = raw
	}
	resp[unField], _ = json.Marshal(un)
	out, _ := json.Marshal(resp)
	rec.buf.Reset()
	rec.buf.Write(out)
	rec.h.Set("Content-Length", strconv.Itoa(len(out)))
	rec.h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
	return rec
}

// transact serves TransactWriteItems and TransactGetItems: cancelled with
// TransactionConflict when an item is held by another write in flight (a
// transaction, or for TransactGetItems any write), with ThrottlingError
// when an item's table, index or partition is out of capacity.
func (c *call) transact(ctx context.Context, auth string, ops []*itemOp) {
	l := c.l
	write := c.op == "TransactWriteItems"
	est, refused := c.admitTx(ops, write)
	if refused != nil {
		writeError(c.w, canceledBody(refused))
		return
	}
	if write && l.opts.TransactionHold > 0 {
		_ = wait.Sleep(ctx, l.opts.TransactionHold) // a caller gone ends the hold early
	}
	rec := c.forward(c.body)
	defer c.reply(rec)
	status, resp := rec.status, rec.buf.Bytes()
	imgs, known := c.txImages(ctx, auth, ops, status == http.StatusOK && write)
	var got []wireItem
	if !write && status == http.StatusOK {
		got = readResponses(resp)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var actual []charge
	for i, op := range ops {
		if write {
			if l.txHeld[heldKey(op)]--; l.txHeld[heldKey(op)] <= 0 {
				delete(l.txHeld, heldKey(op))
			}
		}
		actual = append(actual, txCharge(op, i, status, resp, write, got, imgs[i], known[i])...)
	}
	l.settle(est, actual, l.opts.Now())
}

// admitTx decides, under the layer's lock, whether a transaction may go
// to DynamoDB Local: it is cancelled (refused: the reasons, item by item,
// of its TransactionCanceledException) when an item is held by another
// transaction or a single-item write in flight (a conflict), or when an
// item's estimate would be throttled. Admitted, its estimate is taken from
// the partitions' budgets and, for a write, its items are held until it
// ends.
func (c *call) admitTx(ops []*itemOp, write bool) (est []charge, refused []cancellation) {
	l := c.l
	now := l.opts.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counted(now, ops[0].table)
	reasons := make([]cancellation, len(ops))
	conflict := false
	for i, op := range ops {
		reasons[i] = cancellation{Code: "None"}
		if l.txHeld[heldKey(op)] > 0 || (l.oneHeld[heldKey(op)] > 0) {
			reasons[i] = cancellation{Code: "TransactionConflict", Message: "Transaction is ongoing for the item"}
			conflict = true
		}
	}
	if conflict {
		l.stats.throttle(now, ops[0].table, "", -1, "TransactionConflict")
		return nil, reasons
	}
	throttled := false
	for i, op := range ops {
		e := op.estimate()
		if rs := l.check(e, now); len(rs) > 0 {
			l.throttled(now, op.table, e, rs)
			reasons[i] = cancellation{Code: "ThrottlingError", Message: msgThrottleTx}
			throttled = true
			continue
		}
		l.take(e, 1) // so the next item sees what this one takes
		est = append(est, e...)
	}
	if throttled {
		l.take(est, -1)
		return nil, reasons
	}
	if write {
		for _, op := range ops {
			l.txHeld[heldKey(op)]++
		}
	}
	return est, nil
}

// txImages is each item's image after the transaction: the one read before
// it, or, for a write that succeeded (wrote), the item put, none for a
// delete, and the item read back for an update; known is false where the
// image could not be had.
func (c *call) txImages(ctx context.Context, auth string, ops []*itemOp, wrote bool) (imgs []Item, known []bool) {
	imgs, known = make([]Item, len(ops)), make([]bool, len(ops))
	for i, op := range ops {
		imgs[i], known[i] = op.old, op.known
		if !wrote {
			continue
		}
		switch op.kind {
		case "put":
			imgs[i], known[i] = op.item, true
		case "delete":
			imgs[i], known[i] = nil, true
		case "update":
			img, err := c.l.fetch(ctx, auth, op.table, op.t, op.keyItem)
			imgs[i], known[i] = img, err == nil
		}
	}
	return imgs, known
}

// readResponses is the items of a TransactGetItems answer, in order.
func readResponses(resp []byte) []wireItem {
	var out struct {
		Responses []struct{ Item wireItem }
	}
	_ = json.Unmarshal(resp, &out)
	got := make([]wireItem, 0, len(out.Responses))
	for _, r := range out.Responses {
		got = append(got, r.Item)
	}
	return got
}

// txCharge is what item i (op) of a transaction consumed, as DynamoDB
// bills it (a transaction costs twice a plain call), and, for a write that
// ran, records the item's image (img, or forgets it when not known). The
// caller holds the layer's lock.
func txCharge(op *itemOp, i, status int, resp []byte, write bool, got []wireItem, img Item, known bool) []charge {
	switch {
	case status != http.StatusOK && !bytes.Contains(resp, []byte("TransactionCanceledException")):
		return nil // refused before it ran: nothing consumed
	case status != http.StatusOK:
		return op.estimate() // a cancelled transaction still consumed its units
	case !write:
		n := size(op.old)
		if i < len(got) {
			if it, err := decodeItem(got[i]); err == nil {
				n = size(it)
			}
		}
		return []charge{readCharge(op.t, op.keyItem, n, true, 2)}
	case op.kind == "check":
		return op.estimate()
	}
	charges := writeCharges(op.t, op.keyItem, op.old, img, 2)
	if known {
		op.t.images[op.key] = img
	} else {
		delete(op.t.images, op.key)
	}
	return charges
}

// warmOnly answers an UpdateTable that only raises warm throughput (which
// DynamoDB Local refuses as "Nothing to update"): the layer records it and
// answers with the table's description and its warm throughput.
func (c *call) warmOnly(ctx context.Context, auth string) {
	l := c.l
	status, body, err := l.internal(ctx, auth, "DescribeTable", map[string]string{"TableName": c.req.TableName})
	if err != nil {
		closeConnection(c.w, c.r, err)
		return
	}
	if status != http.StatusOK {
		c.reply(c.forward(c.body))
		return
	}
	l.mu.Lock()
	l.updated(c.req, l.opts.Now())
	w := l.tables[c.req.TableName].base.throughput(l.opts.Scale)
	l.mu.Unlock()
	var d map[string]map[string]json.RawMessage
	if json.Unmarshal(body, &d) != nil || d["Table"] == nil {
		c.reply(c.forward(c.body))
		return
	}
	td := d["Table"]
	td["WarmThroughput"], _ = json.Marshal(map[string]any{"ReadUnitsPerSecond": int64(w.Read), "WriteUnitsPerSecond": int64(w.Write), "Status": "ACTIVE"})
	out, _ := json.Marshal(map[string]any{"TableDescription": td})
	h := c.w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", requestID())
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
	h.Set("Content-Length", strconv.Itoa(len(out)))
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(out)
}

package schemalab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/nightqueue/workshop/queuekit"
	"github.com/nightqueue/workshop/queuekit/catalog"
	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/prices"
	"github.com/nightqueue/workshop/queuekit/workload"
)

// The index-design exercise of the schema notebook (01). Question D asks
// for every index_maintenance job of May 2026, oldest first, showing each
// job's id, night and estimated runtime. A participant designs one
// secondary index for it; MeasureIndexDesign builds the index on a scratch
// table, writes one night as the queue does (each job submitted, then
// marked running, then done), asks D, and prices both: the write units the
// night took (table and index) and the read units D took.
//
// DynamoDB Local is the measurement, with one caveat: it does not charge
// index writes as AWS documents them. The AWS figures therefore come from
// the Developer Guide's rules, applied in Go to the same items
// (AWSIndexWrite): a write that puts an item into an index costs one index
// write per KB of its index entry, one that takes it out one, one that
// changes its index key two (a delete and a put), one that changes only
// projected attributes one, and a write to an item that is in the index
// neither before nor after costs the index nothing ("Global secondary
// indexes", provisioned throughput considerations: writes).

// Index kinds and projections an IndexDesign may name.
const (
	GSI = "GSI"
	LSI = "LSI"

	ProjectAll      = string(types.ProjectionTypeAll)
	ProjectKeysOnly = string(types.ProjectionTypeKeysOnly)
	ProjectInclude  = string(types.ProjectionTypeInclude)
)

// AttrMaintenanceDate is the attribute the exercise's items carry only when
// they are index_maintenance jobs: a copy of batch_date. Keying an index on
// it makes the index sparse: an item without it is not in the index.
const AttrMaintenanceDate = "maintenance_date"

// IndexDesignTable is the scratch table MeasureIndexDesign recreates on
// every call.
const IndexDesignTable = "schema_index_design"

// Question D and the night the exercise writes.
const (
	QuestionDFrom  = "2026-05-01" // first night of May 2026
	QuestionDTo    = "2026-05-31" // last night of May 2026
	IndexNight     = "2026-05-13" // the night whose writes are measured
	questionDClass = queuekit.ClassIndexMaintenance
)

// QuestionDShows are the attributes D's answer shows for each job. The job
// id is also the tail of window_job_id, a table key every index holds.
var QuestionDShows = []string{queuekit.AttrJobID, queuekit.AttrBatchDate, queuekit.AttrRuntime}

// IndexDesign is one secondary index. A GSI names its own partition key
// (and optionally a sort key); an LSI always shares the table's partition
// key, batch_date, names a sort key, and exists only if the table is
// created with it.
type IndexDesign struct {
	Kind         string   // GSI or LSI
	PartitionKey string   // a GSI's partition key; ignored for an LSI
	SortKey      string   // required for an LSI, optional for a GSI
	Projection   string   // ALL, KEYS_ONLY or INCLUDE
	Include      []string // the non-key attributes an INCLUDE projection copies
}

// BestDenseIndex is the cheapest index for D that holds every item: keyed
// on the class and the night, projecting only what D shows, so a status
// change never touches it. The exercise's cost bound is its cost.
var BestDenseIndex = IndexDesign{Kind: GSI, PartitionKey: queuekit.AttrWorkloadClass, SortKey: queuekit.AttrBatchDate,
	Projection: ProjectInclude, Include: []string{queuekit.AttrJobID, queuekit.AttrRuntime}}

// keyTypes are the scalar attributes an index may be keyed on.
var keyTypes = map[string]types.ScalarAttributeType{
	queuekit.AttrBatchDate: types.ScalarAttributeTypeS, queuekit.AttrWindowJobID: types.ScalarAttributeTypeS,
	queuekit.AttrJobID: types.ScalarAttributeTypeS, queuekit.AttrRequestedWindow: types.ScalarAttributeTypeS,
	queuekit.AttrSubmittedAt: types.ScalarAttributeTypeS, queuekit.AttrWorkloadClass: types.ScalarAttributeTypeS,
	queuekit.AttrRuntime: types.ScalarAttributeTypeN, queuekit.AttrPriority: types.ScalarAttributeTypeN,
	queuekit.AttrStatus: types.ScalarAttributeTypeS, AttrMaintenanceDate: types.ScalarAttributeTypeS,
}

// IndexAttributes lists the attributes of the exercise's items, in the
// order of queuekit.RequiredAttributes, then maintenance_date.
func IndexAttributes() []string {
	return append(slices.Clone(queuekit.RequiredAttributes), AttrMaintenanceDate)
}

// Check reports the first thing that makes d impossible to create, in
// words a participant can act on.
func (d IndexDesign) Check() error {
	attrs := IndexAttributes()
	known := func(what, a string) error {
		if !slices.Contains(attrs, a) {
			return fmt.Errorf("%s %q is not an attribute of the items; pick from %s", what, a, strings.Join(attrs, ", "))
		}
		if _, ok := keyTypes[a]; !ok {
			return fmt.Errorf("%s %s is a boolean; a key must be a string, number or binary", what, a)
		}
		return nil
	}
	switch d.Kind {
	case GSI:
		if d.PartitionKey == "" {
			return errors.New("a GSI needs a partition key")
		}
		if err := known("partition key", d.PartitionKey); err != nil {
			return err
		}
		if d.SortKey == d.PartitionKey {
			return errors.New("the sort key must differ from the partition key")
		}
	case LSI:
		if d.SortKey == "" {
			return errors.New("an LSI needs a sort key (its partition key is the table's, batch_date)")
		}
		if d.SortKey == queuekit.AttrWindowJobID || d.SortKey == queuekit.AttrBatchDate {
			return fmt.Errorf("an LSI keyed on %s would repeat the table's own key; choose another sort key", d.SortKey)
		}
	default:
		return fmt.Errorf("kind %q: use %q or %q", d.Kind, GSI, LSI)
	}
	if d.SortKey != "" {
		if err := known("sort key", d.SortKey); err != nil {
			return err
		}
	}
	switch d.Projection {
	case ProjectAll, ProjectKeysOnly:
	case ProjectInclude:
		if len(d.Include) == 0 {
			return errors.New("INCLUDE needs at least one attribute to include")
		}
		for _, a := range d.Include {
			if !slices.Contains(attrs, a) {
				return fmt.Errorf("include %q is not an attribute of the items; pick from %s", a, strings.Join(attrs, ", "))
			}
		}
	default:
		return fmt.Errorf("projection %q: use %q, %q or %q", d.Projection, ProjectAll, ProjectKeysOnly, ProjectInclude)
	}
	return nil
}

// keys are the index's key attributes, partition key first.
func (d IndexDesign) keys() []string {
	pk := d.PartitionKey
	if d.Kind == LSI {
		pk = queuekit.AttrBatchDate
	}
	if d.SortKey == "" {
		return []string{pk}
	}
	return []string{pk, d.SortKey}
}

// projected reports whether the index entry of an item holds attribute a:
// the index keys and the table keys always, the rest as projected.
func (d IndexDesign) projected(a string) bool {
	switch {
	case slices.Contains(d.keys(), a), a == queuekit.AttrBatchDate, a == queuekit.AttrWindowJobID:
		return true
	case d.Projection == ProjectAll:
		return true
	case d.Projection == ProjectInclude:
		return slices.Contains(d.Include, a)
	}
	return false
}

// entry is the item's index entry, or nil when the item lacks a key
// attribute (a sparse index leaves it out).
func (d IndexDesign) entry(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	for _, k := range d.keys() {
		if _, ok := item[k]; !ok {
			return nil
		}
	}
	e := map[string]types.AttributeValue{}
	for a, v := range item {
		if d.projected(a) {
			e[a] = v
		}
	}
	return e
}

// String is the design as one line, e.g. "GSI workload_class + batch_date,
// INCLUDE job_id, estimated_runtime_minutes".
func (d IndexDesign) String() string {
	s := d.Kind + " " + strings.Join(d.keys(), " + ") + ", " + d.Projection
	if d.Projection == ProjectInclude {
		s += " " + strings.Join(d.Include, ", ")
	}
	return s
}

// units rounds a size up to whole units of unit bytes: a write of an
// item is at least one unit; a Query that read nothing, nothing (the read
// rule rounds the bytes read up to the next 4 KB; DynamoDB Local charges an
// empty Query nothing too).
func Units(size, unit int) float64 { return math.Ceil(float64(size) / float64(unit)) }

// AWSIndexWrite is the index write units AWS documents for one write that
// turns the item before (nil: none) into after (nil: deleted), for an index
// d: the rules of the Developer Guide's "Global secondary indexes" page
// (throughput considerations, writes), each index entry counted in 1 KB
// units. A write that leaves the entry as it was (no key and no projected
// attribute changed) is not in that list of charged writes and counts 0.
func AWSIndexWrite(d IndexDesign, before, after map[string]types.AttributeValue) float64 {
	old, nw := d.entry(before), d.entry(after)
	switch {
	case old == nil && nw == nil:
		return 0
	case old == nil:
		return Units(catalog.ItemSize(nw), 1024)
	case nw == nil:
		return Units(catalog.ItemSize(old), 1024)
	}
	for _, k := range d.keys() {
		if !sameValue(old[k], nw[k]) {
			return Units(catalog.ItemSize(old), 1024) + Units(catalog.ItemSize(nw), 1024)
		}
	}
	if len(old) == len(nw) {
		same := true
		for a, v := range old {
			if !sameValue(v, nw[a]) {
				same = false
				break
			}
		}
		if same {
			return 0
		}
	}
	return Units(max(catalog.ItemSize(old), catalog.ItemSize(nw)), 1024)
}

func sameValue(a, b types.AttributeValue) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// WriteUnits are the write units of a set of writes, for the table and for
// its index apart.
type WriteUnits struct{ Table, Index float64 }

// Total is table plus index.
func (w WriteUnits) Total() float64 { return w.Table + w.Index }

// IndexCost is what one index design cost for the night and for question D.
type IndexCost struct {
	Design     IndexDesign
	Items      int // items in the table
	IndexItems int // items with an entry in the index
	NightJobs  int // jobs of IndexNight
	Submits    int // PutItems of the night (one a job)
	Changes    int // status changes of the night (two a job: running, done)

	Local WriteUnits // the night's writes as DynamoDB Local reported them
	AWS   WriteUnits // the same writes by AWS's documented rules

	Queries      int      // Queries D took
	Fetches      int      // GetItems for what the index does not hold (runtime)
	ReadUnits    float64  // D's read units as Local reported them
	AWSReadUnits float64  // by the read rules: each Query's entries summed and rounded up to 4 KB, halved
	Got, Want    []string // job ids, in the order D returned them / the right answer
	Wrong        string   // why D's answer is wrong; "" when right

	awsChange, localChange float64 // status changes' write units, table + index
	awsQueryUnits          float64 // D's Queries alone, by the rules
}

// Right reports whether D's answer holds the right jobs, oldest first.
func (c IndexCost) Right() bool { return c.Wrong == "" }

// NightDollars is the on-demand price of the night's writes plus one D,
// by AWS's rules (prices.Table2026).
func (c IndexCost) NightDollars() float64 {
	return prices.Table2026.WriteCost(c.AWS.Total()) + prices.Table2026.ReadCost(c.AWSReadUnits)
}

// PerChange is the write units one status change cost on average, by AWS's
// rules and as Local reported, table plus index.
func (c IndexCost) PerChange() (aws, local float64) {
	return c.awsChange / float64(max(c.Changes, 1)), c.localChange / float64(max(c.Changes, 1))
}

// indexData is the exercise's table: synthetic nights from late April to
// early June 2026 (workload seed 1), with the four sample nights in place of
// the synthetic ones of the same dates; index_maintenance items carry
// maintenance_date. The night IndexNight comes last and apart.
func indexData() (before, night []queuekit.Job, err error) {
	sample, err := queuekit.SampleJobs()
	if err != nil {
		return nil, nil, err
	}
	synth, err := workload.Generate(workload.Config{Start: "2026-04-26", Nights: 38, Seed: 1})
	if err != nil {
		return nil, nil, err
	}
	sampleDates := map[string]bool{}
	for _, j := range sample {
		sampleDates[j.BatchDate] = true
	}
	for _, j := range append(synth, sample...) {
		switch {
		case j.BatchDate == IndexNight:
			if slices.Contains(sample, j) {
				night = append(night, j)
			}
		case sampleDates[j.BatchDate] && !slices.Contains(sample, j):
		default:
			before = append(before, j)
		}
	}
	return before, night, nil
}

// indexItem is the job's item as the exercise stores it.
func indexItem(j queuekit.Job) (map[string]types.AttributeValue, error) {
	item, err := catalog.MarshalJob(j)
	if err != nil {
		return nil, err
	}
	if j.WorkloadClass == questionDClass {
		item[AttrMaintenanceDate] = &types.AttributeValueMemberS{Value: j.BatchDate}
	}
	return item, nil
}

func withStatus(item map[string]types.AttributeValue, status string) map[string]types.AttributeValue {
	out := make(map[string]types.AttributeValue, len(item))
	for k, v := range item {
		out[k] = v
	}
	out[queuekit.AttrStatus] = &types.AttributeValueMemberS{Value: status}
	return out
}

// nightStatuses are the status changes a job goes through after it is
// submitted "queued".
var nightStatuses = []string{"running", "done"}

// IndexDesignCost prices a design by AWS's rules alone, without DynamoDB:
// the night's writes and question D (which items each Query reads follows
// from the design, as MeasureIndexDesign runs them). The exercise's bound is
// IndexDesignCost(BestDenseIndex).
func IndexDesignCost(d IndexDesign) (IndexCost, error) {
	if err := d.Check(); err != nil {
		return IndexCost{Design: d}, fmt.Errorf("your index: %w", err)
	}
	before, night, err := indexData()
	if err != nil {
		return IndexCost{Design: d}, fmt.Errorf("index design data: %w", err)
	}
	c := IndexCost{Design: d, NightJobs: len(night)}
	var all []map[string]types.AttributeValue
	for _, j := range append(slices.Clone(before), night...) {
		item, err := indexItem(j)
		if err != nil {
			return c, err
		}
		all = append(all, item)
		if d.entry(item) != nil {
			c.IndexItems++
		}
		if j.WorkloadClass == questionDClass && j.BatchDate >= QuestionDFrom && j.BatchDate <= QuestionDTo {
			c.Want = append(c.Want, j.JobID)
		}
	}
	c.Items = len(all)
	for _, j := range night {
		item, err := indexItem(j)
		if err != nil {
			return c, err
		}
		c.Submits++
		c.AWS.Table += Units(catalog.ItemSize(item), 1024)
		c.AWS.Index += AWSIndexWrite(d, nil, item)
		for _, s := range nightStatuses {
			next := withStatus(item, s)
			c.Changes++
			t := Units(max(catalog.ItemSize(item), catalog.ItemSize(next)), 1024)
			i := AWSIndexWrite(d, item, next)
			c.AWS.Table += t
			c.AWS.Index += i
			c.awsChange += t + i
			item = next
		}
	}
	plan, err := planD(d)
	if err != nil {
		c.Wrong = err.Error()
		return c, nil
	}
	c.Queries = len(plan.keys)
	var got []map[string]types.AttributeValue
	for _, q := range plan.keys {
		var read []map[string]types.AttributeValue
		for _, item := range all {
			if e := d.entry(item); e != nil && q.matches(e) {
				read = append(read, e)
			}
		}
		slices.SortStableFunc(read, func(a, b map[string]types.AttributeValue) int {
			return cmp.Compare(sortText(a, q.sortKey), sortText(b, q.sortKey))
		})
		size := 0
		for _, e := range read {
			size += catalog.ItemSize(e)
			if plan.filter(e) {
				got = append(got, e)
			}
		}
		c.awsQueryUnits += Units(size, 4096) / 2
	}
	c.Got = jobIDs(got)
	c.Wrong = judgeD(c.Got, c.Want, got)
	c.fetch(len(got))
	return c, nil
}

// fetch sets the GetItems D needs for the runtime when the index lacks it,
// n items found, and D's read units by the rules: each item is under 4 KB,
// so an eventually consistent GetItem is half a unit.
func (c *IndexCost) fetch(n int) {
	c.Fetches = 0
	if !c.Design.projected(queuekit.AttrRuntime) {
		c.Fetches = n
	}
	c.AWSReadUnits = c.awsQueryUnits + 0.5*float64(c.Fetches)
}

// sortText orders index entries as a Query returns them within one
// partition key value: by the sort key (numbers as numbers would need more
// care; the exercise's numeric keys are small integers, padded here).
func sortText(e map[string]types.AttributeValue, key string) string {
	switch v := e[key].(type) {
	case *types.AttributeValueMemberS:
		return v.Value
	case *types.AttributeValueMemberN:
		return fmt.Sprintf("%012s", v.Value)
	}
	return ""
}

func jobIDs(entries []map[string]types.AttributeValue) []string {
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		if v, ok := e[queuekit.AttrWindowJobID].(*types.AttributeValueMemberS); ok {
			_, id, _ := strings.Cut(v.Value, "#")
			ids = append(ids, id)
		}
	}
	return ids
}

// judgeD says what is wrong with an answer to D, or "" when it holds
// exactly the wanted jobs with their nights in order.
func judgeD(got, want []string, entries []map[string]types.AttributeValue) string {
	a, b := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(a, b) {
		missing, extra := 0, 0
		for _, id := range b {
			if !slices.Contains(a, id) {
				missing++
			}
		}
		for _, id := range a {
			if !slices.Contains(b, id) {
				extra++
			}
		}
		return fmt.Sprintf("D returned %d jobs: %d of D's jobs missing, %d that are not D's", len(got), missing, extra)
	}
	for i := 1; i < len(entries); i++ {
		if sortText(entries[i-1], queuekit.AttrBatchDate) > sortText(entries[i], queuekit.AttrBatchDate) {
			return "the right jobs, but not oldest first"
		}
	}
	return ""
}

// queryKey is one Query of D: the partition key value and an optional
// condition on the sort key.
type queryKey struct {
	pk, pkValue string
	sortKey     string
	sortEq      string // sort key = value
	from, to    string // sort key BETWEEN from AND to
}

func (q queryKey) matches(e map[string]types.AttributeValue) bool {
	if sortText(e, q.pk) != q.pkValue {
		return false
	}
	v := sortText(e, q.sortKey)
	switch {
	case q.sortEq != "":
		return v == q.sortEq
	case q.from != "":
		return v >= q.from && v <= q.to
	}
	return true
}

// dPlan is how D is asked of an index: its Queries and the filter on what
// they read (for what the key does not pin down).
type dPlan struct {
	keys        []queryKey
	filterClass bool // filter workload_class = index_maintenance
	filterDates bool // filter batch_date BETWEEN the first and last night of May
}

func (p dPlan) filter(e map[string]types.AttributeValue) bool {
	if p.filterClass && sortText(e, queuekit.AttrWorkloadClass) != questionDClass {
		return false
	}
	if p.filterDates {
		d := sortText(e, queuekit.AttrBatchDate)
		return d >= QuestionDFrom && d <= QuestionDTo
	}
	return true
}

func isDate(a string) bool { return a == queuekit.AttrBatchDate || a == AttrMaintenanceDate }

// planD turns a design into D's Queries: a partition key D names exactly
// (the class, or a night: then one Query a night of May), a sort key that
// narrows it (the class, or the nights' range), and a filter for the rest.
// A partition key D does not name (a job id, a status) cannot answer D
// with Queries.
func planD(d IndexDesign) (dPlan, error) {
	k := d.keys()
	pk, sk := k[0], ""
	if len(k) == 2 {
		sk = k[1]
	}
	var p dPlan
	switch {
	case pk == queuekit.AttrWorkloadClass:
		q := queryKey{pk: pk, pkValue: questionDClass, sortKey: sk}
		if isDate(sk) {
			q.from, q.to = QuestionDFrom, QuestionDTo
		} else {
			p.filterDates = true
		}
		p.keys = []queryKey{q}
	case isDate(pk):
		for day := 1; day <= 31; day++ {
			q := queryKey{pk: pk, pkValue: fmt.Sprintf("2026-05-%02d", day), sortKey: sk}
			if sk == queuekit.AttrWorkloadClass {
				q.sortEq = questionDClass
			} else if pk != AttrMaintenanceDate && sk != AttrMaintenanceDate {
				p.filterClass = true
			}
			p.keys = append(p.keys, q)
		}
	default:
		return p, fmt.Errorf("a Query must name one %s value, and D names no %s: this index cannot answer D without a Scan", pk, pk)
	}
	if pk == queuekit.AttrWorkloadClass && sk == AttrMaintenanceDate {
		p.filterDates = false
	}
	return p, nil
}

// MeasureIndexDesign creates IndexDesignTable afresh with the design's
// index (an LSI can only be created with its table), loads the exercise's
// nights, writes IndexNight as the queue does (PutItem "queued", then
// UpdateItem "running" and "done"), asks D of the index, and returns what
// it cost: DynamoDB Local's consumed capacity beside AWS's documented rules
// (IndexDesignCost). Whether D's answer is right is judged on what Local
// returned. opts may name the endpoint; the table is always
// IndexDesignTable.
func MeasureIndexDesign(ctx context.Context, d IndexDesign, opts ...catalog.Option) (IndexCost, error) {
	c, err := IndexDesignCost(d)
	if err != nil {
		return c, err
	}
	fail := func(step string, err error) (IndexCost, error) {
		return c, fmt.Errorf("index design %s: %s: %w", d, step, err)
	}
	cat, err := catalog.New(ctx, append(slices.Clone(opts), catalog.WithTable(IndexDesignTable))...)
	if err != nil {
		return fail("open", err)
	}
	if err := cat.DeleteTable(ctx); err != nil {
		return fail("drop the last design's table", err)
	}
	db := cat.Client()
	if _, err := db.CreateTable(ctx, d.createInput()); err != nil {
		return fail("create table", err)
	}
	if err := dynamodb.NewTableExistsWaiter(db).Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(IndexDesignTable)}, 2*time.Minute); err != nil {
		return fail("wait for the table", err)
	}
	before, night, err := indexData()
	if err != nil {
		return fail("data", err)
	}
	if err := loadItems(ctx, db, before); err != nil {
		return fail("load the other nights", err)
	}
	for _, j := range night {
		item, err := indexItem(j)
		if err != nil {
			return fail("item", err)
		}
		put, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(IndexDesignTable), Item: item,
			ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
		if err != nil {
			return fail("submit "+j.JobID, err)
		}
		c.Local.add(put.ConsumedCapacity)
		for _, s := range nightStatuses {
			expr, err := expression.NewBuilder().WithUpdate(expression.Set(expression.Name(queuekit.AttrStatus), expression.Value(s))).Build()
			if err != nil {
				return fail("status", err)
			}
			up, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(IndexDesignTable),
				Key:              map[string]types.AttributeValue{queuekit.AttrBatchDate: item[queuekit.AttrBatchDate], queuekit.AttrWindowJobID: item[queuekit.AttrWindowJobID]},
				UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
				ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
			if err != nil {
				return fail("mark "+j.JobID+" "+s, err)
			}
			c.localChange += c.Local.add(up.ConsumedCapacity)
		}
	}
	if c.Wrong != "" && c.Queries == 0 { // no Query can answer D
		return c, nil
	}
	got, err := c.askD(ctx, db)
	if err != nil {
		return fail("ask D", err)
	}
	c.Got = jobIDs(got)
	c.Wrong = judgeD(c.Got, c.Want, got)
	c.fetch(len(got))
	c.ReadUnits += 0.5 * float64(c.Fetches) // Local charges a GetItem of an item under 4 KB half a unit, as AWS does
	return c, nil
}

// add adds one response's consumed capacity and returns its total.
func (w *WriteUnits) add(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	i := 0.0
	for _, g := range cc.GlobalSecondaryIndexes {
		i += aws.ToFloat64(g.CapacityUnits)
	}
	for _, l := range cc.LocalSecondaryIndexes {
		i += aws.ToFloat64(l.CapacityUnits)
	}
	t := aws.ToFloat64(cc.CapacityUnits) - i
	if cc.Table != nil && cc.Table.CapacityUnits != nil {
		t = aws.ToFloat64(cc.Table.CapacityUnits)
	}
	w.Table += t
	w.Index += i
	return t + i
}

const indexName = "question-d"

// createInput is the scratch table with the design's index.
func (d IndexDesign) createInput() *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{TableName: aws.String(IndexDesignTable), BillingMode: types.BillingModePayPerRequest,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(queuekit.AttrBatchDate), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(queuekit.AttrWindowJobID), KeyType: types.KeyTypeRange}}}
	defined := map[string]bool{}
	for _, a := range append([]string{queuekit.AttrBatchDate, queuekit.AttrWindowJobID}, d.keys()...) {
		if !defined[a] {
			defined[a] = true
			in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String(a), AttributeType: keyTypes[a]})
		}
	}
	var ks []types.KeySchemaElement
	for i, a := range d.keys() {
		kt := types.KeyTypeHash
		if i == 1 {
			kt = types.KeyTypeRange
		}
		ks = append(ks, types.KeySchemaElement{AttributeName: aws.String(a), KeyType: kt})
	}
	proj := &types.Projection{ProjectionType: types.ProjectionType(d.Projection)}
	if d.Projection == ProjectInclude {
		proj.NonKeyAttributes = d.Include
	}
	if d.Kind == LSI {
		in.LocalSecondaryIndexes = []types.LocalSecondaryIndex{{IndexName: aws.String(indexName), KeySchema: ks, Projection: proj}}
	} else {
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String(indexName), KeySchema: ks, Projection: proj}}
	}
	return in
}

// loadItems writes jobs with BatchWriteItem, 25 a request, sending again
// what comes back unprocessed.
func loadItems(ctx context.Context, db *dynamodb.Client, jobs []queuekit.Job) error {
	for start := 0; start < len(jobs); start += 25 {
		var reqs []types.WriteRequest
		for _, j := range jobs[start:min(start+25, len(jobs))] {
			item, err := indexItem(j)
			if err != nil {
				return err
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		}
		pending := map[string][]types.WriteRequest{IndexDesignTable: reqs}
		for attempt := 0; len(pending[IndexDesignTable]) > 0; attempt++ {
			if attempt == 10 {
				return fmt.Errorf("%d items still unprocessed after %d attempts", len(pending[IndexDesignTable]), attempt)
			}
			out, err := db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return err
			}
			pending = out.UnprocessedItems
		}
	}
	return nil
}

// askD runs D's Queries on Local, in order, and returns the entries that
// passed the filter; it adds their read units to c.ReadUnits.
func (c *IndexCost) askD(ctx context.Context, db *dynamodb.Client) ([]map[string]types.AttributeValue, error) {
	plan, err := planD(c.Design)
	if err != nil {
		return nil, err
	}
	var got []map[string]types.AttributeValue
	for _, q := range plan.keys {
		key := expression.Key(q.pk).Equal(expression.Value(q.pkValue))
		switch {
		case q.sortEq != "":
			key = key.And(expression.Key(q.sortKey).Equal(expression.Value(q.sortEq)))
		case q.from != "":
			key = key.And(expression.Key(q.sortKey).Between(expression.Value(q.from), expression.Value(q.to)))
		}
		b := expression.NewBuilder().WithKeyCondition(key)
		var conds []expression.ConditionBuilder
		if plan.filterClass {
			conds = append(conds, expression.Name(queuekit.AttrWorkloadClass).Equal(expression.Value(questionDClass)))
		}
		if plan.filterDates {
			conds = append(conds, expression.Name(queuekit.AttrBatchDate).Between(expression.Value(QuestionDFrom), expression.Value(QuestionDTo)))
		}
		switch len(conds) {
		case 1:
			b = b.WithFilter(conds[0])
		case 2:
			b = b.WithFilter(expression.And(conds[0], conds[1]))
		}
		expr, err := b.Build()
		if err != nil {
			return nil, err
		}
		in := &dynamodb.QueryInput{TableName: aws.String(IndexDesignTable), IndexName: aws.String(indexName),
			KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			Select: types.SelectAllProjectedAttributes, ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal}
		p := dynamodb.NewQueryPaginator(db, in)
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			if err != nil {
				return nil, err
			}
			if out.ConsumedCapacity != nil {
				c.ReadUnits += aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
			}
			got = append(got, out.Items...)
		}
	}
	return got, nil
}

// IndexCostTable sets a design's costs beside the bar's, as a Markdown
// table: what DynamoDB Local reported and what AWS's rules give, each
// labelled, and the on-demand cost of 1,000 nights (the night's writes plus
// one D a night, by the rules). The bar's column comes from the rules alone.
func IndexCostTable(c, bar IndexCost) string {
	both := func(local, aws float64) string { return format.Num(local) + " / " + format.Num(aws) }
	perChange, _ := c.PerChange()
	barChange, _ := bar.PerChange()
	rows := [][]string{
		{"items in the index (of " + format.Int(c.Items) + ")", format.Int(c.IndexItems), format.Int(bar.IndexItems)},
		{"write units of the night, table: Local / AWS rules", both(c.Local.Table, c.AWS.Table), format.Num(bar.AWS.Table)},
		{"write units of the night, index: Local / AWS rules", both(c.Local.Index, c.AWS.Index), format.Num(bar.AWS.Index)},
		{"write units a status change, table + index (AWS rules)", format.Num(perChange), format.Num(barChange)},
		{"Queries for D, then GetItems for the runtime", format.Int(c.Queries) + ", " + format.Int(c.Fetches), format.Int(bar.Queries) + ", " + format.Int(bar.Fetches)},
		{"read units for D: Local / AWS rules", both(c.ReadUnits, c.AWSReadUnits), format.Num(bar.AWSReadUnits)},
		{"on demand, 1,000 nights and one D a night (AWS rules)", format.Dollars(1000 * c.NightDollars()), format.Dollars(1000 * bar.NightDollars())},
	}
	return lab.Table([]string{"night " + IndexNight + ", " + format.Int(c.NightJobs) + " jobs", c.Design.String(), "the bar: the best index that holds every item"}, rows)
}

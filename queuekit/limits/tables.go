package limits

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"
)

// newIndex makes an index with AWS's defaults for its mode.
func (l *Layer) newIndex(tableName, name, pk, sk, mode string, prov *provisioned, od *onDemandMax, warm *warmThroughput) *index {
	ix := &index{name: name, arn: l.arn(tableName, name), pk: pk, sk: sk, mode: mode}
	l.setThroughput(ix, prov, od, warm)
	if ix.mode == OnDemand {
		ix.warm.Read = math.Max(ix.warm.Read, NewOnDemandRead)
		ix.warm.Write = math.Max(ix.warm.Write, NewOnDemandWrite)
	}
	return ix
}

func (l *Layer) setThroughput(ix *index, prov *provisioned, od *onDemandMax, warm *warmThroughput) {
	if prov != nil {
		ix.prov = Units{prov.ReadCapacityUnits, prov.WriteCapacityUnits}
	}
	if od != nil {
		ix.maxOD = Units{math.Max(od.MaxReadRequestUnits, 0), math.Max(od.MaxWriteRequestUnits, 0)}
	}
	if warm != nil { // warm throughput only grows
		ix.warm.Read = math.Max(ix.warm.Read, warm.ReadUnitsPerSecond)
		ix.warm.Write = math.Max(ix.warm.Write, warm.WriteUnitsPerSecond)
	}
}

func projectionOf(ix *index, g gsiDefinition) {
	ix.projection = "ALL"
	if g.Projection != nil && g.Projection.ProjectionType != "" {
		ix.projection = g.Projection.ProjectionType
		ix.include = g.Projection.NonKeyAttributes
	}
}

// created records a table DynamoDB Local created, from its CreateTable.
func (l *Layer) created(req *request, now time.Time) {
	mode := req.BillingMode
	if mode == "" {
		mode = Provisioned // CreateTable's default
	}
	pk, sk := keys(req.KeySchema)
	t := &table{name: req.TableName, gsis: map[string]*index{}, images: map[string]Item{}, complete: true}
	t.base = l.newIndex(t.name, "", pk, sk, mode, req.ProvisionedThroughput, req.OnDemandThroughput, req.WarmThroughput)
	t.base.configure(l.opts.Scale, now)
	for _, g := range req.GlobalSecondaryIndexes {
		gpk, gsk := keys(g.KeySchema)
		ix := l.newIndex(t.name, g.IndexName, gpk, gsk, mode, g.ProvisionedThroughput, g.OnDemandThroughput, g.WarmThroughput)
		projectionOf(ix, g)
		ix.configure(l.opts.Scale, now)
		t.gsis[g.IndexName] = ix
	}
	l.tables[t.name] = t
}

// updated applies an UpdateTable DynamoDB Local accepted (or, for warm
// throughput alone, the layer answered).
func (l *Layer) updated(req *request, now time.Time) {
	t := l.tables[req.TableName]
	if t == nil {
		return
	}
	all := append([]*index{t.base}, mapValues(t.gsis)...)
	if req.BillingMode != "" && req.BillingMode != t.base.mode {
		for _, ix := range all {
			if req.BillingMode == OnDemand {
				// A table switched to on demand: its previous peak is half
				// its provisioned throughput (or a new table's), so it
				// serves up to that provisioned throughput at once.
				ix.warm.Read = math.Max(ix.warm.Read, math.Max(ix.prov.Read, NewOnDemandRead))
				ix.warm.Write = math.Max(ix.warm.Write, math.Max(ix.prov.Write, NewOnDemandWrite))
			} else {
				ix.warm = ix.throughput(l.opts.Scale)
			}
			ix.mode = req.BillingMode
		}
	}
	l.setThroughput(t.base, req.ProvisionedThroughput, req.OnDemandThroughput, req.WarmThroughput)
	for _, u := range req.GlobalSecondaryIndexUpdates {
		switch {
		case u.Create != nil:
			gpk, gsk := keys(u.Create.KeySchema)
			ix := l.newIndex(t.name, u.Create.IndexName, gpk, gsk, t.base.mode, u.Create.ProvisionedThroughput, u.Create.OnDemandThroughput, u.Create.WarmThroughput)
			projectionOf(ix, *u.Create)
			t.gsis[ix.name] = ix
		case u.Update != nil:
			if ix := t.gsis[u.Update.IndexName]; ix != nil {
				l.setThroughput(ix, u.Update.ProvisionedThroughput, u.Update.OnDemandThroughput, u.Update.WarmThroughput)
			}
		case u.Delete != nil:
			delete(t.gsis, u.Delete.IndexName)
		}
	}
	t.base.configure(l.opts.Scale, now)
	for _, ix := range t.gsis {
		ix.configure(l.opts.Scale, now)
	}
}

func mapValues(m map[string]*index) []*index {
	out := make([]*index, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// onlyWarm reports whether an UpdateTable asks for warm throughput and
// nothing else DynamoDB Local would act on: Local answers such a request
// "Nothing to update" (measured on 3.3.1), so the layer answers it.
func onlyWarm(body []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	_, warm := m["WarmThroughput"]
	for k := range m {
		if k != "TableName" && k != "WarmThroughput" {
			return false
		}
	}
	return warm
}

// description is the part of DescribeTable's answer the layer reads.
type description struct {
	Table struct {
		TableName              string
		KeySchema              []keyElement
		ProvisionedThroughput  *provisioned
		OnDemandThroughput     *onDemandMax
		BillingModeSummary     *struct{ BillingMode string }
		GlobalSecondaryIndexes []gsiDefinition
	}
}

// learn reads the description of a table the layer did not see created
// (created before it started, or through another endpoint). Its items'
// sizes are learned as they are read or written.
func (l *Layer) learn(ctx context.Context, auth, name string) error {
	l.mu.Lock()
	_, known := l.tables[name]
	l.mu.Unlock()
	if known || name == "" {
		return nil
	}
	status, body, err := l.internal(ctx, auth, "DescribeTable", map[string]string{"TableName": name})
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return errNoTable
	}
	var d description
	if err := json.Unmarshal(body, &d); err != nil {
		return err
	}
	req := &request{TableName: name, KeySchema: d.Table.KeySchema, ProvisionedThroughput: d.Table.ProvisionedThroughput,
		OnDemandThroughput: d.Table.OnDemandThroughput, GlobalSecondaryIndexes: d.Table.GlobalSecondaryIndexes, BillingMode: Provisioned}
	if d.Table.BillingModeSummary != nil && d.Table.BillingModeSummary.BillingMode != "" {
		req.BillingMode = d.Table.BillingModeSummary.BillingMode
	} else if p := d.Table.ProvisionedThroughput; p == nil || p.ReadCapacityUnits+p.WriteCapacityUnits == 0 {
		req.BillingMode = OnDemand
	}
	for i := range req.GlobalSecondaryIndexes {
		if req.BillingMode == OnDemand {
			req.GlobalSecondaryIndexes[i].ProvisionedThroughput = nil
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, known := l.tables[name]; !known {
		l.created(req, l.opts.Now())
		l.tables[name].complete = false
	}
	return nil
}

// tableNames lists the tables a request names.
func (req *request) tableNames() []string {
	var names []string
	if req.TableName != "" {
		names = append(names, req.TableName)
	}
	for n := range req.RequestItems {
		names = append(names, n)
	}
	for _, ti := range req.TransactItems {
		for _, a := range []*struct {
			TableName string
			Key       wireItem
			Item      wireItem
		}{ti.Get, ti.Put, ti.Update, ti.Delete, ti.ConditionCheck} {
			if a != nil && a.TableName != "" {
				names = append(names, a.TableName)
			}
		}
	}
	return names
}

func validMode(m string) bool { return m == "" || m == Provisioned || m == OnDemand }

func badMode(m string) map[string]any {
	return map[string]any{"__type": "com.amazon.coral.validate#ValidationException",
		"message": "1 validation error detected: Value '" + strings.ReplaceAll(m, "'", "") + "' at 'billingMode' failed to satisfy constraint: Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"}
}

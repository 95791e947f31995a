package limitslab

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/logging"

	"github.com/nightqueue/workshop/queuekit/format"
	"github.com/nightqueue/workshop/queuekit/lab"
	"github.com/nightqueue/workshop/queuekit/limits"
)

// WarmFleet replays the fleet's measured writes (3 table write units and
// 4 due-index write units a job, items under 1 KB) at Jobs a second (AWS
// rate: the layer divides its limits by S, so the replay is divided too)
// for Seconds, on a fresh on-demand table with a due index, through a
// limits layer. The table and the index each get the warm throughput
// asked for (write units a second, AWS units; 0: none, a new table's or
// index's own 4,000), set in CreateTable as AWS sets it: on the table and
// on each global secondary index apart. A job is a PutItem (its entry in
// the index: 1 index write), an UpdateItem that moves its due_at (a changed
// index key: 2) and one that removes claim_shard and due_at (1); its user
// key is one of Users, its shard job mod Shards. Writes are not retried,
// so what lands is what the table and its index serve.
type WarmFleet struct {
	Jobs      float64 // jobs a second (AWS rate)
	Shards    int     // K: the due index's partition keys
	TableWarm float64 // warm throughput to request on the table
	IndexWarm float64 // warm throughput to request on the due index
	Seconds   float64 // default 3
	Users     int     // distinct user keys, default 997
}

// Table and index write units a job, as notebook 10 measured them.
const (
	FleetTableWritesPerJob = 3
	FleetIndexWritesPerJob = 4
)

// WarmFleetResult is what a WarmFleet replay saw.
type WarmFleetResult struct {
	WarmFleet
	Table                            string // deleted once the replay ends; the layer keeps its counts
	Scale                            float64
	TablePartitions, IndexPartitions int
	Writes, Failed                   int // write requests sent and refused
	// TableUnits and IndexUnits are the write units a second the layer
	// counted on the table and on its due index over the replay, in AWS
	// units (its count times S).
	TableUnits, IndexUnits float64
	FailedBy               map[string]int // refusals by throttling reason
	Elapsed                time.Duration
}

// RunWarmFleet creates the table and runs the replay; the table is deleted
// (at DynamoDB Local) before it returns.
func RunWarmFleet(ctx context.Context, s *limits.Server, w WarmFleet) (WarmFleetResult, error) {
	if w.Seconds == 0 {
		w.Seconds = 3
	}
	if w.Users == 0 {
		w.Users = 997
	}
	if w.Shards < 1 || !(w.Jobs > 0) || w.Seconds <= 0 || w.TableWarm < 0 || w.IndexWarm < 0 || w.TableWarm > 40000 || w.IndexWarm > 40000 {
		return WarmFleetResult{}, fmt.Errorf("warm fleet: %s shards, %s jobs a second, warm throughput %s (table) and %s (index): want at least 1 shard, a rate > 0, warm throughputs from 0 to the 40,000 quota",
			format.Num(float64(w.Shards)), format.Num(w.Jobs), format.Num(w.TableWarm), format.Num(w.IndexWarm))
	}
	name := fmt.Sprintf("warm_fleet_%d", time.Now().UnixNano())
	client := func(ep string) *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{BaseEndpoint: aws.String(ep), Region: "us-east-1",
			Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""), Logger: logging.Nop{},
			Retryer: retry.NewStandard(func(o *retry.StandardOptions) { o.MaxAttempts = 1 })})
	}
	db := client(s.URL)
	warm := func(v float64) *types.WarmThroughput {
		if v <= 0 {
			return nil
		}
		return &types.WarmThroughput{WriteUnitsPerSecond: aws.Int64(int64(math.Ceil(v)))}
	}
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: types.BillingModePayPerRequest,
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
		AttributeDefinitions: []types.AttributeDefinition{str("pk"), str("sk"), str("claim_shard"), str("due_at")},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{IndexName: aws.String("due"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("claim_shard"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("due_at"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}, WarmThroughput: warm(w.IndexWarm)}},
		WarmThroughput: warm(w.TableWarm)})
	if err != nil {
		return WarmFleetResult{}, fmt.Errorf("warm fleet: create %s through the layer: %w", name, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = client(s.Target).DeleteTable(dctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	}()
	r := WarmFleetResult{WarmFleet: w, Table: name, Scale: s.Scale(), FailedBy: map[string]int{}}
	if l, ok := s.Limits(name, ""); ok {
		r.TablePartitions = l.Partitions
	}
	if l, ok := s.Limits(name, "due"); ok {
		r.IndexPartitions = l.Partitions
	}
	rate := w.Jobs / r.Scale
	n := int(rate * w.Seconds)
	jobs := make(chan int)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				sent, failed := replayJob(ctx, db, name, i, w)
				mu.Lock()
				r.Writes += sent
				for _, f := range failed {
					r.Failed++
					r.FailedBy[f]++
				}
				mu.Unlock()
			}
		}()
	}
	pace(ctx, start, n, rate, jobs)
	wg.Wait()
	r.Elapsed = time.Since(start)
	samples := s.Stats()
	r.TableUnits = limits.Totals(samples, name, "").WriteUnits * r.Scale / r.Elapsed.Seconds()
	r.IndexUnits = limits.Totals(samples, name, "due").WriteUnits * r.Scale / r.Elapsed.Seconds()
	return r, ctx.Err()
}

// replayJob writes one job's three writes; a refused write is named by its
// reason, and the job's later writes are still sent (as a fleet retrying
// them would).
func replayJob(ctx context.Context, db *dynamodb.Client, table string, i int, w WarmFleet) (int, []string) {
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	key := map[string]types.AttributeValue{"pk": s("USER#" + strconv.Itoa(i%w.Users)), "sk": s(fmt.Sprintf("JOB#%09d", i))}
	item := map[string]types.AttributeValue{"pk": key["pk"], "sk": key["sk"], "claim_shard": s(strconv.Itoa(i % w.Shards)),
		"due_at": s(fmt.Sprintf("%013d", time.Now().UnixMilli()))}
	var failed []string
	note := func(err error) {
		if err != nil {
			failed = append(failed, failureName(err))
		}
	}
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	note(err)
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key, UpdateExpression: aws.String("SET due_at = :d"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":d": s(fmt.Sprintf("%013d", time.Now().Add(10*time.Minute).UnixMilli()))}})
	note(err)
	_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(table), Key: key, UpdateExpression: aws.String("REMOVE claim_shard, due_at")})
	note(err)
	return 3, failed
}

// WarmFleetSummary is the Markdown under a replay: the partitions each got,
// the write units a second offered to each and what the layer counted (AWS
// units), and what was refused, by reason.
func WarmFleetSummary(r WarmFleetResult) string {
	return fmt.Sprintf("At S = %s, %s jobs a second for %s s. The table: **%s partitions**, offered %s write units a second (%s a job), "+
		"the layer counted %s. The due index: **%s partitions**, offered %s (%s a job) over %s shard keys, %s a key; the layer counted %s. "+
		"Refused: **%s of %s writes** (%s).",
		format.Num(r.Scale), format.Num(r.Jobs), format.Num(r.Seconds), format.Int(r.TablePartitions), format.Num(math.Round(r.Jobs*FleetTableWritesPerJob)),
		format.Int(FleetTableWritesPerJob), format.Num(math.Round(r.TableUnits)), format.Int(r.IndexPartitions), format.Num(math.Round(r.Jobs*FleetIndexWritesPerJob)),
		format.Int(FleetIndexWritesPerJob), format.Int(r.Shards), format.Num(math.Round(r.Jobs*FleetIndexWritesPerJob/float64(r.Shards))),
		format.Num(math.Round(r.IndexUnits)), format.Int(r.Failed), format.Int(r.Writes), ReasonList(r.FailedBy))
}

// CheckWarmFleet is notebook 10's warm-throughput exercise: the replay
// refused nothing, the shard keys each stay within half a partition, and
// the table's and the index's warm throughput each cover their own writes
// at 80 % (the design's utilisation: fleetplan.Seed003), within the
// quota. One self-check line each; it returns whether all held.
func CheckWarmFleet(r WarmFleetResult) bool {
	ok := lab.Report(r.Failed == 0 && r.Writes > 0, "the replay landed every write", fmt.Sprintf("%s of %s refused", format.Int(r.Failed), format.Int(r.Writes)),
		"an index partition refused writes: keys hash onto partitions unevenly, so a partition may hold several shard keys; more shards make each key smaller, more warm throughput gives the index more partitions")
	need := func(units float64) float64 { return units / 0.8 }
	perKey := r.Jobs * FleetIndexWritesPerJob / float64(r.Shards)
	ok = lab.Report(perKey <= 500, "each shard key takes at most half a partition's 1,000 write units",
		fmt.Sprintf("%s a key", format.Num(math.Round(perKey))), "the index's write units a second over 500, rounded up") && ok
	tw, iw := math.Max(r.TableWarm, 4000), math.Max(r.IndexWarm, 4000)
	ok = lab.Report(tw >= need(r.Jobs*FleetTableWritesPerJob) && tw <= 40000, "the table's warm throughput covers its own writes at 80 %",
		fmt.Sprintf("%s write units a second (a new table's 4,000 when you ask for less)", format.Num(tw)),
		"the table takes the jobs' table writes only (submit, claim, end): jobs a second × 3, over 0.8") && ok
	return lab.Report(iw >= need(r.Jobs*FleetIndexWritesPerJob) && iw <= 40000, "the due index's warm throughput covers its own writes at 80 %",
		fmt.Sprintf("%s write units a second (a new index's 4,000 when you ask for less)", format.Num(iw)),
		"the index is throttled apart from its table and pushes back on it: jobs a second × its 4 writes, over 0.8") && ok
}

package limits

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// BenchmarkOverhead measures the layer's cost on DynamoDB Local's
// throughput, side by side in one run: rounds alternate (direct, layer,
// layer, direct, ...), each round 8 goroutines (-bench-workers) doing a
// mix of PutItem, GetItem, UpdateItem and Query on 64 keys for a fixed
// number of calls, through one SDK client each way, after one warm-up
// round each way that is not counted. The layer is the `queuekit limits`
// process users run (-limits-inprocess: inside the benchmark's process,
// for -cpuprofile). It prints both throughputs, the median ratio of
// adjacent pairs, and the CPU time per call of each process in each arm
// (the client, the layer and DynamoDB Local, from getrusage and /proc):
// CPU time depends less than throughput on what else the machine runs, and
// on a machine whose cores these processes keep busy, throughput is cores
// / CPU per call, so the CPU ratio bounds the overhead on a quiet machine;
// where Local has a core of its own and is the bottleneck, the ratio of
// Local's own CPU per call does. It also prints the cores each process
// kept busy per arm and each CPU's busy share (all processes). With -pin
// both arms run with Local on one CPU and the client and the layer on
// another (benchpin_test.go); -bench-workers sets the goroutines (default
// 8). Nothing is throttled (S = 1, far below 1,000 units a second per key;
// the clients do not retry, so a throttle would fail the benchmark).
func BenchmarkOverhead(b *testing.B) {
	const rounds, calls = benchRounds, 400
	workers := *benchWorkers
	side := newBenchSide(b)
	name := side.table
	ctx := context.Background()
	var cpuDirect, cpuLayer cpuTimes
	var wallDirect, wallLayer time.Duration
	var busyDirect, busyLayer cpuBusy
	round := func(db *dynamodb.Client, r int) float64 {
		before, busy, start := side.cpu(), readCPUBusy(), time.Now()
		defer func() {
			used, wall, cores := side.cpu().sub(before), time.Since(start), readCPUBusy().sub(busy)
			if db == side.direct {
				cpuDirect, wallDirect, busyDirect = cpuDirect.add(used), wallDirect+wall, busyDirect.add(cores)
			} else {
				cpuLayer, wallLayer, busyLayer = cpuLayer.add(used), wallLayer+wall, busyLayer.add(cores)
			}
		}()
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range share(calls, workers, w) {
					pk, sk := fmt.Sprintf("k%d", (w*31+i)%64), fmt.Sprintf("s%d", i%4)
					var err error
					switch i % 4 {
					case 0:
						_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item(pk, sk, "v", fmt.Sprint(r, i))})
					case 1:
						_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: item(pk, sk)})
					case 2:
						_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item(pk, sk), UpdateExpression: aws.String("SET n = :n"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}})
					case 3:
						_, err = db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"),
							ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}})
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatalf("round %d: %v", r, err)
		}
		return float64(calls) / time.Since(start).Seconds()
	}
	round(side.direct, -1) // warm-up: connections, the JVM's JIT; not counted
	round(side.layer, -1)
	cpuDirect, cpuLayer = cpuTimes{}, cpuTimes{}
	wallDirect, wallLayer, busyDirect, busyLayer = 0, 0, cpuBusy{}, cpuBusy{}
	for range b.N {
		// Pairs, each run back to back in alternating order (ABBA...), so
		// that the machine's load, shared with other work, hits both arms
		// of a pair alike; the ratio is the median of the pairs' ratios.
		var direct, layer, ratios []float64
		for r := range rounds {
			var d, l float64
			if r%2 == 0 {
				d, l = round(side.direct, r), round(side.layer, r)
			} else {
				l, d = round(side.layer, r), round(side.direct, r)
			}
			direct, layer, ratios = append(direct, d), append(layer, l), append(ratios, l/d)
		}
		slices.Sort(direct)
		slices.Sort(layer)
		slices.Sort(ratios)
		d, l, q := direct[rounds/2], layer[rounds/2], ratios[rounds/2]
		b.ReportMetric(d, "direct-calls/s")
		b.ReportMetric(l, "layer-calls/s")
		b.ReportMetric(q, "layer/direct")
		where := "the `queuekit limits` process"
		if side.inProcess != nil {
			where = "in the benchmark's process"
		}
		if side.pin != nil {
			where += fmt.Sprintf(", pinned: DynamoDB Local on CPU %d, the client and the layer on CPU %d", side.pin.local, side.pin.client)
		}
		fmt.Printf("limits layer overhead (layer %s): %d interleaved pairs of %d calls after a warm-up round each way (%d goroutines; PutItem, GetItem, UpdateItem, Query): DynamoDB Local direct median %.0f calls/s (range %.0f-%.0f), through the layer median %.0f calls/s (range %.0f-%.0f); median pair ratio layer/direct %.3f (pairs %.3f-%.3f, quartiles %.3f-%.3f): overhead %.1f %%\n",
			where, rounds, calls, workers, d, direct[0], direct[rounds-1], l, layer[0], layer[rounds-1], q, ratios[0], ratios[rounds-1], ratios[rounds/4], ratios[3*rounds/4], 100*(1-q))
		// Cores busy: each process's CPU time over the arm's wall time, and
		// each CPU's busy share from /proc/stat (every process on the
		// machine: the rest is other work's). Where DynamoDB Local is near 1
		// core pinned, it is the bottleneck; where the client's CPU is
		// near 1, the client side is.
		fmt.Printf("limits layer cores busy: directly client %.2f + DynamoDB Local %.2f (CPUs busy, any process: %v); through the layer client %.2f + layer %.2f + DynamoDB Local %.2f (CPUs: %v); throughput over all rounds: direct %.0f calls/s, layer %.0f calls/s\n",
			cores(cpuDirect.self, wallDirect), cores(cpuDirect.local, wallDirect), busyDirect,
			cores(cpuLayer.self, wallLayer), cores(cpuLayer.layer, wallLayer), cores(cpuLayer.local, wallLayer), busyLayer,
			float64(rounds*calls)/wallDirect.Seconds(), float64(rounds*calls)/wallLayer.Seconds())
		b.ReportMetric(cores(cpuDirect.local, wallDirect), "local-cores-direct")
		b.ReportMetric(cores(cpuLayer.local, wallLayer), "local-cores-layer")
		n := rounds * calls
		td := perCall(cpuDirect.self+cpuDirect.local, n)
		tl := perCall(cpuLayer.self+cpuLayer.layer+cpuLayer.local, n)
		if side.localPID == 0 {
			fmt.Printf("limits layer CPU per call: layer %.0f µs, client %.0f µs directly and %.0f µs through the layer (DynamoDB Local's process not found: no CPU ratio)\n",
				perCall(cpuLayer.layer, n), perCall(cpuDirect.self, n), perCall(cpuLayer.self, n))
		} else {
			fmt.Printf("limits layer CPU per call (user+system, %d calls each way): directly client %.0f µs + DynamoDB Local %.0f µs = %.0f µs; through the layer client %.0f µs + layer %.0f µs + DynamoDB Local %.0f µs = %.0f µs; CPU ratio direct/layer %.3f (overhead bound on a machine these processes saturate: %.1f %%)\n",
				n, perCall(cpuDirect.self, n), perCall(cpuDirect.local, n), td, perCall(cpuLayer.self, n), perCall(cpuLayer.layer, n), perCall(cpuLayer.local, n), tl, td/tl, 100*(1-td/tl))
			b.ReportMetric(td/tl, "cpu-direct/layer")
			// Where DynamoDB Local alone bounds the throughput (a core of
			// its own, kept busy; the client and the layer on others with
			// room to spare), throughput is 1 / Local's CPU per call, so
			// the ratio of Local's CPU per call is the overhead to expect:
			// what the layer's calls cost Local beyond the client's (its
			// ReturnValues ALL_NEW on UpdateItem, its reads of items it has
			// not seen), not the hop's CPU, which runs elsewhere.
			lq := float64(cpuDirect.local) / float64(cpuLayer.local)
			fmt.Printf("limits layer, DynamoDB Local's CPU per call: directly %.0f µs, through the layer %.0f µs; ratio %.3f (the throughput ratio where Local alone is the bottleneck: overhead %.1f %%)\n",
				perCall(cpuDirect.local, n), perCall(cpuLayer.local, n), lq, 100*(1-lq))
			b.ReportMetric(lq, "local-cpu-direct/layer")
		}
		b.ReportMetric(perCall(cpuLayer.layer, n), "layer-cpu-µs/call")
	}
	if side.inProcess != nil {
		if tot := Totals(side.inProcess.s.Stats(), name, ""); tot.ThrottledTotal() != 0 {
			b.Fatalf("the layer throttled %v: the benchmark measures overhead, not limits", tot.Throttled)
		}
	}
}

// share is goroutine w's part of calls shared among workers goroutines
// (all of them add up to calls).
func share(calls, workers, w int) int {
	n := calls / workers
	if w < calls%workers {
		n++
	}
	return n
}

// benchRounds is the number of interleaved pairs BenchmarkOverhead runs.
const benchRounds = 24 // even, so both orders run equally often

// BenchmarkOverheadPerCall is the same comparison at the finest
// interleaving: 8 goroutines (-bench-workers) send the same mix of 4,800
// calls each way, alternately to DynamoDB Local directly and through the
// layer (the order flipping every call), and time each call. Load that
// changes from one millisecond to the next hits both arms alike, so the
// ratio of the median latencies (direct / layer: a closed loop's
// throughput ratio where the hop's latency is what slows each goroutine)
// is steadier than rounds' throughputs on a busy machine. Where DynamoDB
// Local is saturated, both arms wait in its one queue, and the ratio is
// the hop's latency, not a throughput ratio. The layer is the same
// `queuekit limits` process as in BenchmarkOverhead; it also prints the
// layer's CPU time per call through it.
func BenchmarkOverheadPerCall(b *testing.B) {
	const calls = 4800 // each way, shared among the goroutines
	workers := *benchWorkers
	side := newBenchSide(b)
	name := side.table
	ctx := context.Background()
	do := func(db *dynamodb.Client, w, i int) (time.Duration, error) {
		pk, sk := fmt.Sprintf("k%d", (w*31+i)%64), fmt.Sprintf("s%d", i%4)
		start := time.Now()
		var err error
		switch i % 4 {
		case 0:
			_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: item(pk, sk, "v", fmt.Sprint(i))})
		case 1:
			_, err = db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(name), Key: item(pk, sk)})
		case 2:
			_, err = db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: item(pk, sk), UpdateExpression: aws.String("SET n = :n"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: fmt.Sprint(i)}}})
		case 3:
			_, err = db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(name), KeyConditionExpression: aws.String("pk = :p"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":p": &types.AttributeValueMemberS{Value: pk}}})
		}
		return time.Since(start), err
	}
	for w := range workers { // warm-up, not counted
		for i := range 8 {
			if _, err := do(side.direct, w, i); err != nil {
				b.Fatal(err)
			}
			if _, err := do(side.layer, w, i); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range b.N {
		before, busy, start := side.cpu(), readCPUBusy(), time.Now()
		var mu sync.Mutex
		var direct, layer []float64
		var wg sync.WaitGroup
		var failed error
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range share(calls, workers, w) {
					order := []*dynamodb.Client{side.direct, side.layer}
					if (i+w)%2 == 1 {
						order[0], order[1] = order[1], order[0]
					}
					for _, db := range order {
						d, err := do(db, w, i)
						mu.Lock()
						if err != nil {
							failed = err
						} else if db == side.direct {
							direct = append(direct, d.Seconds())
						} else {
							layer = append(layer, d.Seconds())
						}
						mu.Unlock()
					}
				}
			}()
		}
		wg.Wait()
		if failed != nil {
			b.Fatal(failed)
		}
		slices.Sort(direct)
		slices.Sort(layer)
		md, ml := direct[len(direct)/2], layer[len(layer)/2]
		b.ReportMetric(md/ml, "layer/direct")
		used, wall, cpus := side.cpu().sub(before), time.Since(start), readCPUBusy().sub(busy)
		where := ""
		if side.pin != nil {
			where = fmt.Sprintf("; pinned: DynamoDB Local on CPU %d, the client and the layer on CPU %d", side.pin.local, side.pin.client)
		}
		fmt.Printf("limits layer overhead, per call: %d calls each way, alternating (%d goroutines; PutItem, GetItem, UpdateItem, Query): median latency DynamoDB Local direct %.2f ms, through the layer %.2f ms (+%.2f ms); throughput ratio layer/direct %.3f, overhead %.1f %%; layer CPU %.0f µs per call through it; cores busy: client %.2f, layer %.2f, DynamoDB Local %.2f (CPUs busy, any process: %v)%s\n",
			len(direct), workers, 1000*md, 1000*ml, 1000*(ml-md), md/ml, 100*(1-md/ml), perCall(used.layer, len(layer)),
			cores(used.self, wall), cores(used.layer, wall), cores(used.local, wall), cpus, where)
	}
}

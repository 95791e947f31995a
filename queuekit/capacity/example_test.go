package capacity_test

import (
	"fmt"

	"github.com/nightqueue/workshop/queuekit/capacity"
)

func ExampleFleet_Plan() {
	p, err := capacity.Seed003.Plan()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.1f jobs/s, %.0f running at once\n", p.ArrivalsPerSecond, p.ConcurrentJobs)
	fmt.Printf("%d machines by threads, %d by memory: %d, bound by %s\n", p.MachinesByThreads, p.MachinesByMemory, p.Machines, p.Binding)
	// Output:
	// 1157.4 jobs/s, 347222 running at once
	// 10851 machines by threads, 1086 by memory: 10851, bound by threads
}

func ExampleCheckSeed003() {
	for _, l := range capacity.CheckSeed003() {
		if !l.Right && !l.Missing {
			fmt.Printf("%-42s claims %-6g right %.5g %s\n", l.Line, l.Claimed, l.Correct, l.Unit)
		}
	}
	// Output:
	// 32*60/(5*60*60) = 0.10 jobs per second     claims 0.1    right 0.10667 jobs/s
	// Overall machines need 11,570 machines      claims 11570  right 10851 machines
	// 16*1000*60/50*5*60 = 64 jobs per second    claims 64     right 1.0667 jobs/s
	// 1157/64 = 20 machines                      claims 20     right 1086 machines
}

func ExampleDynamo() {
	d, err := capacity.Dynamo(capacity.Seed003, capacity.DefaultLifecycle, capacity.Prices2026)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%.0f WCU/s, %.0f RCU/s, %d index shards; $%.2f a day on demand, $%.2f provisioned\n",
		d.WriteUnitsPerSecond, d.ReadUnitsPerSecond, d.WriteShards, d.OnDemandUSDPerDay, d.ProvisionedUSDPerDay)
	// Output:
	// 6944 WCU/s, 741 RCU/s, 3 index shards; $383.00 a day on demand, $110.64 provisioned
}

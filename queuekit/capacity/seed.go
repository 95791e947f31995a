package capacity

// Seed003 is the fleet seed 003 sizes: 100 M jobs a day, 5-minute jobs,
// 16-core machines with 2 threads a core, 50 MB per job, 16 GB per machine,
// flat arrivals, every slot used.
var Seed003 = Fleet{JobsPerDay: 100_000_000, JobMinutes: 5, ThreadsPerMachine: 32, JobMemoryMB: 50, MachineMemoryGB: 16}

// SeedLine is one line of seed 003's sizing, checked.
type SeedLine struct {
	Line      string  // the line as the seed writes it
	Quantity  string  // what it is meant to compute
	Unit      string  // the unit of Claimed and Correct
	Claimed   float64 // the value the seed states
	AsWritten float64 // the expression evaluated as written (usual precedence, left to right)
	Correct   float64 // the right value, from Fleet.Plan
	Right     bool    // whether the claimed value is right (to the seed's rounding)
	Verdict   string  // one sentence: right, or what is wrong and by how much
	Missing   bool    // the seed has no such line (Claimed and AsWritten are 0)
}

// Ratio is Claimed / Correct: about 1 for a right line, 0 for a missing one.
func (l SeedLine) Ratio() float64 {
	if l.Missing || l.Correct == 0 {
		return 0
	}
	return l.Claimed / l.Correct
}

// CheckSeed003 reproduces each line of seed 003's sizing and says which are
// right. The right values come from Seed003.Plan(): λ = 10⁸/86,400 =
// 1,157.4 jobs/s; a machine finishes 32 jobs every 300 s = 0.1067 jobs/s by
// threads and 320 jobs every 300 s = 1.067 jobs/s by memory; so threads bind
// at ⌈1,157.4/0.1067⌉ = 10,851 machines, and memory alone would need 1,086.
func CheckSeed003() []SeedLine {
	p, _ := Seed003.Plan() // Seed003 is valid; its tests check the error
	lambda := p.AverageArrivalsPerSecond
	jobSeconds := Seed003.JobMinutes * 60
	perMachineThreads := float64(p.SlotsByThreads) / jobSeconds // jobs/s one machine finishes, by threads
	perMachineMemory := float64(p.SlotsByMemory) / jobSeconds   // jobs/s one machine finishes, by memory
	return []SeedLine{
		{
			Line: "100,000,000/24*60*60 = 1157 QPS", Quantity: "average arrival rate", Unit: "jobs/s",
			Claimed: 1157, AsWritten: 100_000_000.0 / 24 * 60 * 60, Correct: lambda, Right: true,
			Verdict: "right value (1,157.4 jobs/s), but the expression needs parentheses, 100,000,000/(24*60*60): as written it is 15,000,000,000 (10⁸ / 24 × 3,600); and these are job submissions per second, not queries (each job costs several DynamoDB requests)",
		},
		{
			Line: "16 core machine = 16 *2 32 threads", Quantity: "worker threads per machine", Unit: "threads",
			Claimed: 32, AsWritten: 16 * 2, Correct: float64(p.SlotsByThreads), Right: true,
			Verdict: "right, as an assumption: two hardware threads a core, one job a thread for its whole 5 minutes",
		},
		{
			Line: "32*60/(5*60*60) = 0.10 jobs per second", Quantity: "jobs one machine finishes per second, by threads", Unit: "jobs/s",
			Claimed: 0.10, AsWritten: 32.0 * 60 / (5 * 60 * 60), Correct: perMachineThreads, Right: false,
			Verdict: "the expression is right (32 jobs per 300 s = 0.1067 jobs/s) but the result is cut to 0.10, 6.25 % low",
		},
		{
			Line: "Overall machines need 11,570 machines", Quantity: "machines by threads", Unit: "machines",
			Claimed: 11570, AsWritten: 1157 / 0.10, Correct: float64(p.MachinesByThreads), Right: false,
			Verdict: "1157/0.10 carries the truncation: 1,157.4/0.1067 = 10,850.7, so 10,851 machines; the seed buys 719 machines (6.6 %) too many",
		},
		{
			Line: "16*1000*60/50*5*60 = 64 jobs per second", Quantity: "jobs one machine finishes per second, by memory", Unit: "jobs/s",
			Claimed: 64, AsWritten: 16.0 * 1000 * 60 / 50 * 5 * 60, Correct: perMachineMemory, Right: false,
			Verdict: "16,000 MB / 50 MB = 320 jobs in memory, finishing every 5 minutes: 64 jobs per minute, not per second (1.067 jobs/s): 60 times too high; as written, without parentheses, it is 5,760,000",
		},
		{
			Line: "1157/64 = 20 machines", Quantity: "machines by memory", Unit: "machines",
			Claimed: 20, AsWritten: 1157.0 / 64, Correct: float64(p.MachinesByMemory), Right: false,
			Verdict: "carries the minutes-for-seconds slip (and 1157/64 is 18.1, not 20): memory needs 1,157.4/1.067 = 1,085.1, so 1,086 machines, 54 times more",
		},
		{
			Line: "(no line: which constraint binds)", Quantity: "fleet", Unit: "machines",
			Missing: true, Correct: float64(p.Machines), Right: false,
			Verdict: "missing: the fleet is the larger need, threads bind at 10,851 machines (memory would allow 320 jobs a machine, the threads only 32)",
		},
	}
}

package wire

import "time"

// Meta records where and how a number was produced, so that it stays
// interpretable months later.
type Meta struct {
	Command   []string  `json:"command"`
	GitRef    string    `json:"git_ref"` // commit, with -dirty when the tree had changes; "unknown" outside a checkout
	Version   string    `json:"version"` // tool version (set with -ldflags -X)
	StartedAt time.Time `json:"started_at"`
	Hardware  Hardware  `json:"hardware"`
}

// Hardware describes the machine and the CPU affinity the process ran with.
type Hardware struct {
	CPUModel    string `json:"cpu_model"`
	LogicalCPUs int    `json:"logical_cpus"`
	MemoryBytes uint64 `json:"memory_bytes"`
	Kernel      string `json:"kernel"`
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	GoVersion   string `json:"go_version"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	CPUAffinity []int  `json:"cpu_affinity"` // as granted by the kernel (sched_getaffinity)
}

// Latency holds percentiles of an HdrHistogram, in nanoseconds. Count is the
// number of samples; when it is zero every other field is zero and means "no
// data", not "instant".
type Latency struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	P999  int64   `json:"p999"`
	Max   int64   `json:"max"`
}

// GeneratorStats is the generator's evidence about itself: whether it kept
// up. The harness bases its generator-capped verdict on these, not on CPU
// alone.
type GeneratorStats struct {
	CPUCores   float64 `json:"cpu_cores"` // (user+system) / window
	CPUUserS   float64 `json:"cpu_user_s"`
	CPUSystemS float64 `json:"cpu_system_s"`

	// ScheduleLag is how late operations were sent against their
	// schedule (open loop). Zero-count in closed loop.
	ScheduleLag     Latency `json:"schedule_lag_ns"`
	ScheduleLagP99  int64   `json:"schedule_lag_p99_ns"`
	LateSendsFrac   float64 `json:"late_sends_fraction"` // sends more than one interval late
	RunnableP99Ns   int64   `json:"goroutine_runnable_p99_ns"`
	OSRunDelayNs    int64   `json:"os_run_delay_ns"` // time its threads waited for a CPU (schedstat)
	ReadSyscalls    int64   `json:"read_syscalls"`
	MessagesPerRead float64 `json:"messages_per_read"`

	// Engine is how the connections were driven: "loop" (the event-loop
	// engine, load/evloop), "goroutines" (one or two per connection) or a
	// scenario's own client library ("nats.go").
	Engine string `json:"engine,omitempty"`
	// IOPattern is how each connection wrote and read, the part of the
	// client a server's cost per message depends on (docs/efficiency.md,
	// "What a client's pattern costs the server"): "batch-wake" (a batch
	// framed into one write; woken once its replies are all in, by
	// SO_RCVLOWAT) or "eager" (a batch in one write; each reply read as
	// it arrives, as browsers and Node's ws read). Empty: not reported.
	IOPattern string `json:"io_pattern,omitempty"`
	// Loops is the event loops' evidence over the window (engine "loop"):
	// each loop's busy fraction (the share of the window it was not
	// blocked waiting for events: a loop that never waits is saturated)
	// and the p99 lag from an event being ready (epoll returned it, a
	// timer came due) to its being handled.
	Loops *LoopStats `json:"loops,omitempty"`
	// LoadThreads is the OS run delay of the threads that carried the
	// load: the threads that ran at least a minimum share of the window,
	// each one's run delay as a fraction of its own runnable time
	// (run_delay / (run_time + run_delay), schedstat).
	LoadThreads *ThreadStats `json:"load_threads,omitempty"`
	// SourceAddrs are the local addresses the connections spread over
	// (--source-addrs); absent when the kernel picked.
	SourceAddrs []string `json:"source_addrs,omitempty"`
	// Memory is the generator's own memory before it connected and at
	// the window's edges, read from /proc/self: the baseline its memory
	// per connection is measured from. Absent where it could not be read
	// (not Linux), or from a generator that does not report it.
	Memory *GeneratorMemory `json:"memory,omitempty"`
}

// GeneratorMemory is the generator's own memory, as it read it: its PSS
// (measure "pss", /proc/self/smaps_rollup) or, where that could not be
// read at every one of the three moments, its RSS (measure "rss"), in
// bytes.
type GeneratorMemory struct {
	Measure            string `json:"measure"`
	BeforeConnectBytes uint64 `json:"before_connect_bytes"`
	WindowStartBytes   uint64 `json:"window_start_bytes"`
	WindowEndBytes     uint64 `json:"window_end_bytes"`
}

// I/O patterns for GeneratorStats.IOPattern.
const (
	IOBatchWake = "batch-wake" // one write per batch; one wake-up per batch of replies (SO_RCVLOWAT)
	IOEager     = "eager"      // one write per batch; every reply read as it arrives
)

// LoopStats is the event-loop engine's evidence over the window.
type LoopStats struct {
	Count        int       `json:"count"`
	BusyFraction []float64 `json:"busy_fraction"`     // per loop: 1 - time blocked in epoll_wait / window
	MaxBusy      float64   `json:"max_busy_fraction"` // the busiest loop's
	LagP99Ns     int64     `json:"lag_p99_ns"`        // ready -> handled, over every loop
	LagMaxNs     int64     `json:"lag_max_ns"`
}

// ThreadStats is the run delay of the threads that carried the load: those
// present at both edges of the window that ran at least
// load.LoadThreadMinShare of it, never the runtime's sysmon, or the
// busiest thread when none did (load's selfstats.go says why).
type ThreadStats struct {
	Threads           int     `json:"threads"`                       // threads that ran >= the minimum share of the window
	RunNs             int64   `json:"run_ns"`                        // their run time over the window, summed
	RunDelayNs        int64   `json:"run_delay_ns"`                  // their run delay over the window, summed
	RunDelayFraction  float64 `json:"run_delay_fraction"`            // RunDelayNs / (RunNs + RunDelayNs)
	MaxThreadFraction float64 `json:"max_thread_run_delay_fraction"` // the worst such thread's own fraction
}

// DropResult is summary.drop.
type DropResult struct {
	Dropped int `json:"connections_dropped"`
	// ServerUp: the ready probe answered within DropTimeout after the
	// drop; ReadyAfterNs how soon (null when it did not).
	ServerUp     bool   `json:"server_up"`
	ReadyAfterNs *int64 `json:"ready_after_ns"`
	ReadyProbe   string `json:"ready_probe"`
	ProbeError   string `json:"probe_error,omitempty"`
	// NewClientOK: a fresh connection completed a round trip (Prober),
	// NewClientAfterNs after the drop.
	NewClientOK      bool   `json:"new_client_ok"`
	NewClientAfterNs *int64 `json:"new_client_after_ns"`
	NewClientError   string `json:"new_client_error,omitempty"`
}

package load

import (
	"encoding/json"
	"time"
)

// SchemaVersion is the version of the JSON document written by `ceiling load
// --json`. Bump it when a field changes meaning or is removed; adding a field
// does not need a bump. 2: a scenario's own knobs moved under
// config.params (fanout's app_id, key, channels, publishers; echo's
// eager_reads, io).
const SchemaVersion = 2

// Result is the whole JSON document of one `ceiling load` run. The harness
// reads it back (see harness), so every field name here is a contract: snake
// case, units in the name, and both the requested and the achieved value
// where the two can differ.
type Result struct {
	SchemaVersion int            `json:"schema_version"`
	Meta          Meta           `json:"meta"`
	Config        Config         `json:"config"`
	Summary       Summary        `json:"summary"`
	Generator     GeneratorStats `json:"generator"`
}

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

// Summary is what the run measured inside its window (warm-up excluded).
type Summary struct {
	Scenario string `json:"scenario"` // the scenario's registered name
	Mode     string `json:"mode"`     // closed | open

	// What was asked for (open loop only; null in closed loop), what was
	// attempted and what succeeded, in operations per second of the
	// window. An operation is one batch (echo: succeeded when every reply
	// came back) or one publish request (fanout: succeeded when the server
	// accepted it, a 2xx without an error in its body). Achieved counts
	// successes only: an overloaded server that times out most requests
	// shows attempted at the requested rate and achieved far below it.
	RequestedOpsPerS *float64 `json:"requested_ops_per_s"`
	AttemptedOpsPerS float64  `json:"attempted_ops_per_s"`
	AchievedOpsPerS  float64  `json:"achieved_ops_per_s"`

	// ThroughputPerS counts messages the server handled per second of the
	// measured window: for echo, messages echoed back; for fanout,
	// deliveries to subscribers.
	ThroughputPerS float64 `json:"throughput_per_s"`
	BytesPerS      float64 `json:"bytes_per_s"` // payload bytes of those messages
	Messages       int64   `json:"messages"`
	MeasuredNs     int64   `json:"measured_ns"` // actual length of the window

	// Errors counts failed operations (and failed connections); a
	// throughput taken with errors is a measurement of the failure.
	Errors         int64            `json:"errors"`
	ErrorsByReason map[string]int64 `json:"errors_by_reason"`
	// Failure says why the run could not measure (preflight failed, no
	// connection opened, interrupted); empty when it ran its window.
	Failure string `json:"failure,omitempty"`
	// Dropped counts connections lost during the window, Reconnects the
	// ones re-established. Null where the scenario counts a lost
	// connection in errors instead.
	Dropped    *int64 `json:"dropped"`
	Reconnects *int64 `json:"reconnects"`

	// Saturated is true when the open loop hit --max-inflight: the
	// requested rate was not met and the report says so.
	Saturated       bool   `json:"saturated"`
	SaturatedReason string `json:"saturated_reason,omitempty"`

	ConnectionsRequested int `json:"connections_requested"`
	ConnectionsOpen      int `json:"connections_open"`

	Latency Latency `json:"latency_ns"`

	// Drop is what --drop found: whether the server stayed up and served
	// a new client after every connection vanished at once.
	Drop *DropResult `json:"drop,omitempty"`

	// Blocks are the scenario's own parts of the summary, each written
	// inline under its key (summary.fanout, summary.kinds): see SetBlock.
	Blocks map[string]json.RawMessage `json:"-"`
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
}

// LoopStats is the event-loop engine's evidence over the window.
type LoopStats struct {
	Count        int       `json:"count"`
	BusyFraction []float64 `json:"busy_fraction"`     // per loop: 1 - time blocked in epoll_wait / window
	MaxBusy      float64   `json:"max_busy_fraction"` // the busiest loop's
	LagP99Ns     int64     `json:"lag_p99_ns"`        // ready -> handled, over every loop
	LagMaxNs     int64     `json:"lag_max_ns"`
}

// ThreadStats is the run delay of the threads that carried the load: those
// present at both edges of the window that ran at least LoadThreadMinShare
// of it, never the runtime's sysmon, or the busiest thread when none did
// (selfstats.go says why).
type ThreadStats struct {
	Threads           int     `json:"threads"`                       // threads that ran >= the minimum share of the window
	RunNs             int64   `json:"run_ns"`                        // their run time over the window, summed
	RunDelayNs        int64   `json:"run_delay_ns"`                  // their run delay over the window, summed
	RunDelayFraction  float64 `json:"run_delay_fraction"`            // RunDelayNs / (RunNs + RunDelayNs)
	MaxThreadFraction float64 `json:"max_thread_run_delay_fraction"` // the worst such thread's own fraction
}

// DelayFraction is run delay as a fraction of the runnable time (ran or
// waited to run); 0 when the thread never was runnable. ThreadStats'
// fractions are this.
func DelayFraction(run, delay int64) float64 {
	if run+delay <= 0 {
		return 0
	}
	return float64(delay) / float64(run+delay)
}

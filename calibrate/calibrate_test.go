package calibrate

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// The null sink answers each client frame with a server frame of the same
// size, whatever the batching, over several connections and loops.
func TestSinkEchoesEachFrame(t *testing.T) {
	if !Supported {
		t.Skip("Linux only")
	}
	t.Parallel()
	for _, size := range []int{1, 125, 126, 300, 70_000} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		done := make(chan error, 1)
		writes := []string{WritesBatched, WritesPerMessage}[size%2]
		go func() { done <- ServeSink(ctx, ln, size, 2, writes) }()
		payload := []byte(strings.Repeat("x", size))
		for c := range 3 {
			ws, err := wsconn.Dial(ctx, "ws://"+ln.Addr().String()+"/echo", wsconn.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ws.SetReadDeadline(time.Now().Add(10 * time.Second))
			for _, batch := range []int{1, 7} {
				ps := make([][]byte, batch)
				for i := range ps {
					ps[i] = payload
				}
				if err := ws.WriteBatch(wsconn.OpText, ps); err != nil {
					t.Fatal(err)
				}
				for i := range batch {
					op, p, err := ws.ReadMessage()
					if err != nil || op != wsconn.OpText || len(p) != size {
						t.Fatalf("size %d, conn %d, batch %d, reply %d: op %v, %d bytes, %v", size, c, batch, i, op, len(p), err)
					}
				}
			}
			ws.Abort()
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeSink: %v", err)
		}
	}
}

func TestNearCap(t *testing.T) {
	t.Parallel()
	c := Cap{PerCorePerS: 100_000}
	for _, tt := range []struct {
		cores int
		tput  float64
		want  bool
	}{
		{1, 85_000, true}, {1, 84_999, false}, {1, 150_000, true}, {2, 170_000, true}, {2, 169_000, false},
		{3, 0, false}, {0, 90_000, true}, // 0 cores counts as one
	} {
		if got, _ := NearCap(c, tt.cores, tt.tput, NearCapPct); got != tt.want {
			t.Errorf("NearCap(%d cores, %.0f/s) = %v, want %v", tt.cores, tt.tput, got, tt.want)
		}
	}
	if near, _ := NearCap(Cap{}, 1, 1e9, NearCapPct); near {
		t.Error("a zero cap flags everything")
	}
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	ok := Config{Generator: []string{"g"}, Sink: []string{"s"}, GeneratorCPUs: []int{0}, SinkCPUs: []int{1},
		Scenarios: []string{"echo"}, Batches: []int{1}, Conns: []int{1, 2}, RecordSize: 64, Duration: time.Second, SinkWrites: WritesBatched}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for want, mut := range map[string]func(*Config){
		"--conns":        func(c *Config) { c.Conns = []int{2, 2} },
		"overlap":        func(c *Config) { c.SinkCPUs = []int{0} },
		"--record-size":  func(c *Config) { c.RecordSize = 0 },
		"--batch-ladder": func(c *Config) { c.Batches = []int{0} },
		"--warmup":       func(c *Config) { c.Warmup = -1 },
		"--generator":    func(c *Config) { c.Generator = nil },
		"--sink-writes":  func(c *Config) { c.SinkWrites = "lots" },
	} {
		c := ok
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// The floor's side of the Echoer (make bench): a client that writes a
// pre-framed masked batch, waits for a batch of replies (SO_RCVLOWAT) and
// writes it again, against the null sink: batches keep coming back.
func TestEchoerAsFloorClient(t *testing.T) {
	if !Supported {
		t.Skip("Linux only")
	}
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- ServeSink(ctx, ln, 100, 1, WritesBatched) }()
	const batch = 10
	payload := []byte(strings.Repeat("y", 100))
	var frames []byte
	var fds []int
	for range 2 {
		ws, err := wsconn.Dial(ctx, "ws://"+ln.Addr().String()+"/", wsconn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if frames == nil {
			for range batch {
				frames = ws.AppendFrame(frames, wsconn.OpText, payload)
			}
		}
		fd, _, err := ws.Detach()
		if err != nil {
			t.Fatal(err)
		}
		fds = append(fds, fd)
	}
	e, err := NewEchoer(EchoerConfig{Unit: wsconn.ServerFrameSize(100) * batch, Reply: frames, Copies: 1, LowWater: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		if err := e.Add(fd, 0, true); err != nil {
			t.Fatal(err)
		}
	}
	ran := make(chan struct{})
	go func() { e.Run(); close(ran) }()
	for e.Units() < 100 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	e.Close()
	<-ran
	if e.Units() < 100 {
		t.Errorf("%d batches came back within the deadline, want 100", e.Units())
	}
	if n, first := e.Errors(); n > 0 {
		t.Errorf("%d errors, first %s", n, first)
	}
	if r := e.Reads(); r < e.Units() || r > 2*e.Units()+2 {
		t.Logf("reads %d for %d batches (one per batch expected, a little more is the kernel's business)", r, e.Units())
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("ServeSink: %v", err)
	}
}

// The ramp's rule on synthetic steps: it stops at a saturated plateau,
// takes the best step, projects when nothing saturated, and marks the
// sink and contention.
func TestRamp(t *testing.T) {
	t.Parallel()
	cfg := Config{GeneratorCPUs: []int{0, 1}, SinkCPUs: []int{2}, Conns: []int{1, 4, 16, 64, 256}}
	type want struct {
		steps                                    int
		perCore                                  float64
		conns                                    int
		saturated, projected, sinkLimited, contd bool
		err                                      string
	}
	for _, tt := range []struct {
		name  string
		steps map[int]Step // by connections; missing: fail the test
		want  want
	}{
		{"saturates and plateaus", map[int]Step{
			1: {ThroughputPerS: 100, GeneratorCores: 0.5}, 4: {ThroughputPerS: 300, GeneratorCores: 1.9},
			16: {ThroughputPerS: 310, GeneratorCores: 1.95, SinkCores: 0.95}},
			want{steps: 3, perCore: 155, conns: 16, saturated: true, sinkLimited: true}},
		{"keeps climbing while saturated", map[int]Step{
			1: {ThroughputPerS: 100, GeneratorCores: 1.9}, 4: {ThroughputPerS: 200, GeneratorCores: 1.9},
			16: {ThroughputPerS: 205, GeneratorCores: 1.9}},
			want{steps: 3, perCore: 102.5, conns: 16, saturated: true}},
		{"never saturated: projected from the best step", map[int]Step{
			1: {ThroughputPerS: 100, GeneratorCores: 0.2}, 4: {ThroughputPerS: 400, GeneratorCores: 0.5, RunDelay: 0.4},
			16: {ThroughputPerS: 300, GeneratorCores: 0.5}, 64: {ThroughputPerS: 350, GeneratorCores: 0.6},
			256: {ThroughputPerS: 380, GeneratorCores: 0.6}},
			want{steps: 5, perCore: 800, conns: 4, projected: true, contd: true}},
		{"a failed step ends the ramp", map[int]Step{
			1: {ThroughputPerS: 100, GeneratorCores: 0.4}, 4: {Error: "boom"}},
			want{steps: 2, perCore: 250, conns: 1, projected: true}},
		{"nothing measured", map[int]Step{1: {Error: "boom"}}, want{err: "no step measured a throughput: boom"}},
	} {
		var ran int
		c, err := ramp(context.Background(), cfg, "echo", 10, func(n int) (Step, error) {
			st, ok := tt.steps[n]
			if !ok {
				t.Fatalf("%s: ramp ran %d connections, past where it should have stopped", tt.name, n)
			}
			ran++
			st.Connections = n
			return st, nil
		})
		if tt.want.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.want.err) {
				t.Errorf("%s: error %v, want %q", tt.name, err, tt.want.err)
			}
			continue
		}
		got := want{steps: ran, perCore: c.PerCorePerS, conns: c.Connections, saturated: c.Saturated, projected: c.Projected,
			sinkLimited: c.SinkLimited, contd: c.Contended}
		if err != nil || got != tt.want {
			t.Errorf("%s: got %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

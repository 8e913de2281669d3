package main

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

const statFixture = `cpu  698376 1962 555870 2028920 4075 0 76444 0 0 0
cpu0 325794 1028 252874 1078778 989 0 23521 0 0 0
cpu1 372581 934 302996 950142 3086 7 52923 11 0 0
cpu10 1 1 1 1 1 1 1 0 0 0
intr 100546088 0 0 0 0 0 0 0
ctxt 187264937
btime 1760000000
`

func TestParseCPUStat(t *testing.T) {
	busy, soft, err := parseCPUStat([]byte(statFixture), 1)
	if err != nil {
		t.Fatal(err)
	}
	// user+nice+system+irq+softirq; idle, iowait and steal left out
	if want := uint64(372581 + 934 + 302996 + 7 + 52923); busy != want {
		t.Errorf("busy = %d, want %d", busy, want)
	}
	if soft != 52923 {
		t.Errorf("softirq = %d, want 52923", soft)
	}
	if _, _, err := parseCPUStat([]byte(statFixture), 2); err == nil {
		t.Error("cpu2 (absent) parsed without error")
	}
	if _, _, err := parseCPUStat([]byte("cpu1 1 2 x 4 5 6 7\n"), 1); err == nil {
		t.Error("a malformed cpu1 line parsed without error")
	}
}

const interruptsFixture = `           CPU0       CPU1       
  1:          0          9   IO-APIC   1-edge      i8042
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 29:     742340      48668   PCI-MSI 512000-edge      virtio0-input.0
NMI:          0          0   Non-maskable interrupts
LOC:   54331209   49180035   Local timer interrupts
SPU:          0          0   Spurious interrupts
RES:   10061294    9247609   Rescheduling interrupts
CAL:   36377680   20806625   Function call interrupts
TLB:     123456      65432   TLB shootdowns
ERR:          0
MIS:          0
`

func TestParseIPIs(t *testing.T) {
	got, err := parseIPIs([]byte(interruptsFixture))
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(10061294 + 36377680); got[0] != want {
		t.Errorf("cpu0 = %d, want %d", got[0], want)
	}
	if want := uint64(9247609 + 20806625); got[1] != want {
		t.Errorf("cpu1 = %d, want %d", got[1], want)
	}
	// An offline CPU has no column: the header says which is which.
	gap := "           CPU0       CPU2\nRES:  5  7  Rescheduling interrupts\nCAL:  1  2  Function call interrupts\n"
	got, err = parseIPIs([]byte(gap))
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 6 || got[2] != 9 || got[1] != 0 {
		t.Errorf("with cpu1 offline: %v, want cpu0 6, cpu2 9", got)
	}
	noCAL := strings.ReplaceAll(interruptsFixture, "CAL:", "XXX:")
	if _, err := parseIPIs([]byte(noCAL)); err == nil {
		t.Error("no CAL row parsed without error")
	}
}

func TestSumSchedstat(t *testing.T) {
	files := [][]byte{[]byte("1000 200 3\n"), []byte("2500 0 7\n"), []byte("7 1 1\n")}
	run, wait, err := sumSchedstat(files)
	if err != nil {
		t.Fatal(err)
	}
	if run != 3507 || wait != 201 {
		t.Errorf("sums = %d, %d; want 3507, 201", run, wait)
	}
	if _, _, err := sumSchedstat([][]byte{[]byte("12\n")}); err == nil {
		t.Error("a malformed schedstat parsed without error")
	}
}

const ssFixture = `0      0      127.0.0.1:36015 127.0.0.1:50354
	 bbr wscale:10,10 rto:204 rtt:0.076/0.073 ato:40 mss:32768 pmtu:65535 rcvmss:2640 advmss:65483 cwnd:17 bytes_sent:161796910 bytes_acked:161796910 bytes_received:164320040 segs_out:632027 segs_in:252879 data_segs_out:632007 data_segs_in:63230 send 58637473684bps lastsnd:1 lastrcv:1 delivered:632008 app_limited busy:3356ms rcv_rtt:5.794 rcv_space:110880 minrtt:0.001 snd_wnd:65536
0      260    127.0.0.1:36015 127.0.0.1:50356
	 cubic wscale:7,7 rto:201 rtt:0.025/0.017 mss:32768 cwnd:10 segs_out:100 segs_in:90 data_segs_out:80 data_segs_in:70 send 115343360000bps unacked:1
`

func TestParseSS(t *testing.T) {
	got := parseSS([]byte(ssFixture))
	if len(got) != 2 {
		t.Fatalf("%d sockets, want 2: %v", len(got), got)
	}
	a := got["127.0.0.1:36015 127.0.0.1:50354"]
	if want := (tcpCounters{SegsIn: 252879, SegsOut: 632027, DataSegsIn: 63230, DataSegsOut: 632007}); a != want {
		t.Errorf("first socket %+v, want %+v", a, want)
	}
	b := got["127.0.0.1:36015 127.0.0.1:50356"]
	if want := (tcpCounters{SegsIn: 90, SegsOut: 100, DataSegsIn: 70, DataSegsOut: 80}); b != want {
		t.Errorf("second socket %+v, want %+v", b, want)
	}
	if len(parseSS(nil)) != 0 {
		t.Error("empty output gave sockets")
	}
}

func TestParseCounter(t *testing.T) {
	b := []byte("# HELP refserver_messages_received_total x\n# TYPE refserver_messages_received_total counter\nrefserver_messages_received_total 111380\nrefserver_messages_sent_total 5\n")
	v, err := parseCounter(b, "refserver_messages_received_total")
	if err != nil || v != 111380 {
		t.Errorf("got %d, %v; want 111380", v, err)
	}
	if _, err := parseCounter(b, "nope_total"); err == nil {
		t.Error("a missing metric parsed without error")
	}
}

// twoSnapshots is 2 s in which 200,000 messages were received.
func twoSnapshots() (snapshot, snapshot) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	a := snapshot{At: t0, Messages: 1000, ServerRunNs: 5e9, ServerWait: 1e9, ServerVolSw: 100, CPUBusy: 1000, CPUSoftirq: 300,
		ClientIPI: 50, ServerIPI: 10, HasTCP: true, ClientRunNs: 1e9,
		TCP: map[string]tcpCounters{"s1": {SegsIn: 100, SegsOut: 100, DataSegsIn: 50, DataSegsOut: 90}}}
	b := snapshot{At: t0.Add(2 * time.Second), Messages: 201000, ServerRunNs: 6.25e9, ServerWait: 1.1e9, ServerVolSw: 2100, CPUBusy: 1160, CPUSoftirq: 340,
		ClientIPI: 20050, ServerIPI: 4010, HasTCP: true, ClientRunNs: 2.2e9,
		TCP: map[string]tcpCounters{
			"s1": {SegsIn: 40100, SegsOut: 202100, DataSegsIn: 20050, DataSegsOut: 200090},
			"s2": {SegsIn: 999, SegsOut: 999}, // opened after A: left out
		}}
	return a, b
}

func TestDerive(t *testing.T) {
	a, b := twoSnapshots()
	f, err := derive(a, b, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := figures{
		Seconds: 2, Messages: 200000, MsgPerS: 100000,
		ServerBusy:       0.8,    // 160 jiffies = 1.6 s of 2
		MsgPerBusyCPUS:   125000, // 200,000 / 1.6 s
		MsgPerTaskCPUS:   160000, // 200,000 / 1.25 s
		SoftirqShare:     0.25,   // 40 of 160
		ServerRunq:       0.05,   // 0.1 s of 2
		VolSwPerMsg:      0.01,   // 2000
		HasTCP:           true,
		SegsInPerMsg:     0.2,  // 40,000
		PureAcksInPerMsg: 0.1,  // 40,000 - 20,000
		AcksOutPerMsg:    0.01, // 202,000 - 200,000
		ClientIPIPerMsg:  0.1,  // 20,000
		ServerIPIPerMsg:  0.02, // 4,000
		ClientCores:      0.6,  // 1.2 s of 2
	}
	if !near(f, want) {
		t.Errorf("derive:\n got %+v\nwant %+v", f, want)
	}
	b.HasTCP = false
	if f, _ := derive(a, b, 100); f.HasTCP || f.SegsInPerMsg != 0 {
		t.Errorf("without ss in B: %+v, want no TCP figures", f)
	}
	b.Messages = a.Messages
	if _, err := derive(a, b, 100); err == nil {
		t.Error("a window with no messages derived without error")
	}
}

func near(a, b figures) bool {
	x := []float64{a.Seconds, a.Messages, a.MsgPerS, a.ServerBusy, a.MsgPerBusyCPUS, a.MsgPerTaskCPUS, a.SoftirqShare, a.ServerRunq,
		a.VolSwPerMsg, a.SegsInPerMsg, a.PureAcksInPerMsg, a.AcksOutPerMsg, a.ClientIPIPerMsg, a.ServerIPIPerMsg, a.ClientCores}
	y := []float64{b.Seconds, b.Messages, b.MsgPerS, b.ServerBusy, b.MsgPerBusyCPUS, b.MsgPerTaskCPUS, b.SoftirqShare, b.ServerRunq,
		b.VolSwPerMsg, b.SegsInPerMsg, b.PureAcksInPerMsg, b.AcksOutPerMsg, b.ClientIPIPerMsg, b.ServerIPIPerMsg, b.ClientCores}
	for i := range x {
		if math.Abs(x[i]-y[i]) > 1e-9*math.Max(1, math.Abs(y[i])) {
			return false
		}
	}
	return a.HasTCP == b.HasTCP
}

func TestRotate(t *testing.T) {
	c := []string{"a", "b", "c"}
	for r, want := range [][]string{{"a", "b", "c"}, {"b", "c", "a"}, {"c", "a", "b"}, {"a", "b", "c"}} {
		if got := rotate(c, r); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", r, got, want)
		}
	}
	// Over n rounds each client is first exactly once.
	first := map[string]int{}
	for r := range len(c) {
		first[rotate(c, r)[0]]++
	}
	for _, x := range c {
		if first[x] != 1 {
			t.Errorf("%s first %d times in %d rounds", x, first[x], len(c))
		}
	}
}

func fig(perCPU, clientCores, busy float64) *figures {
	return &figures{ServerRunq: 0.01, Seconds: 3, Messages: 3e5, MsgPerS: 1e5, ServerBusy: busy, MsgPerBusyCPUS: perCPU, MsgPerTaskCPUS: perCPU * 1.2,
		SoftirqShare: 0.3, VolSwPerMsg: 0.01, HasTCP: true, SegsInPerMsg: 0.11, PureAcksInPerMsg: 0.01,
		AcksOutPerMsg: 0.002, ClientIPIPerMsg: 0.1, ServerIPIPerMsg: 0.02, ClientCores: clientCores}
}

func TestSummarizeAndRender(t *testing.T) {
	runs := []runResult{
		{Round: 1, Client: "ceiling", Figures: fig(400e3, 0.5, 0.95)},
		{Round: 1, Client: "gorilla-frame", Figures: fig(300e3, 0.95, 0.7)},
		{Round: 2, Client: "gorilla-frame", Figures: func() *figures { f := fig(340e3, 0.97, 0.8); f.ServerRunq = 0.5; return f }()},
		{Round: 2, Client: "ceiling", Figures: fig(440e3, 0.5, 0.97)},
		{Round: 1, Client: "gorilla-batch", Figures: fig(420e3, 0.6, 0.96), Errors: "1 errors map[read:1]"},
		{Round: 2, Client: "gorilla-batch", Failure: "refserver's message counter did not rise"},
	}
	rows := summarize([]string{"ceiling", "node", "gorilla-batch", "gorilla-frame"}, runs, map[string]string{"node": "node not found in PATH"})
	got := renderTable(rows)
	want := tableHeader +
		"| ceiling | 2 | 100.0k | 420.0k | 1.00x | 400.0k–440.0k | 504.0k | 0.96 | 30% | 0.010 | 0.110 | 0.010 | 0.002 | 0.100 | 0.50 |  |\n" +
		"| node | 0 | - | - | - | - | - | - | - | - | - | - | - | - | - | skipped: node not found in PATH |\n" +
		"| gorilla-batch | 1 | 100.0k | 420.0k | 1.05x | 420.0k–420.0k | 504.0k | 0.96 | 30% | 0.010 | 0.110 | 0.010 | 0.002 | 0.100 | 0.60 | INVALID: client errors in 1 of 1 runs; 1 of 2 runs failed — 1 errors map[read:1]; refserver's message counter did not rise |\n" +
		"| gorilla-frame | 2 | 100.0k | 320.0k | 0.76x (0.75–0.77) | 300.0k–340.0k | 384.0k | 0.75 | 30% | 0.010 | 0.110 | 0.010 | 0.002 | 0.100 | 0.96 | client-capped; contended: server waited 0.26 s/s for its CPU |\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(runLine(runs[4], 2), "INVALID: 1 errors") {
		t.Errorf("run line of an invalid run: %q", runLine(runs[4], 2))
	}
	if !strings.Contains(runLine(runs[5], 2), "FAILED: refserver's") {
		t.Errorf("run line of a failed run: %q", runLine(runs[5], 2))
	}
}

func TestClientCommand(t *testing.T) {
	o := options{ceiling: "/b/ceiling", nodeGen: "/g/gen.js", conns: 16, batch: 10, size: 256, warmup: time.Second, duration: 3 * time.Second}
	path, args, js := clientCommand(o, "/self", "ceiling-eager", "ws://h:1/echo", "/tmp/d")
	if path != "/b/ceiling" || args[0] != "load" || !slices.Contains(args, "--eager-reads") || js != "/tmp/d/result.json" {
		t.Errorf("ceiling-eager: %s %v %s", path, args, js)
	}
	if i := slices.Index(args, "--duration"); i < 0 || args[i+1] != "6s" {
		t.Errorf("ceiling-eager duration: %v, want warmup+window+margin = 6s", args)
	}
	path, args, js = clientCommand(o, "/self", "gorilla-quickack", "ws://h:1/echo", "/tmp/d")
	if path != "/self" || js != "" || !slices.Contains(args, "quickack") || !slices.Contains(args, "-run") {
		t.Errorf("gorilla-quickack: %s %v %q", path, args, js)
	}
	for _, c := range allClients {
		if v, ok := strings.CutPrefix(c, "gorilla-"); ok {
			if _, ok := gorillaVariants[v]; !ok {
				t.Errorf("client %s has no gorilla variant", c)
			}
		}
	}
}

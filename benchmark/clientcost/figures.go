package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// figures are one run's derived numbers, from snapshots A and B.
type figures struct {
	Seconds          float64 `json:"seconds"`
	Messages         float64 `json:"messages"`
	MsgPerS          float64 `json:"msg_per_s"`
	ServerBusy       float64 `json:"server_cpu_busy"`        // busy share of the server's CPU
	MsgPerBusyCPUS   float64 `json:"msg_per_server_cpu_s"`   // CPU-busy basis (softirq included)
	MsgPerTaskCPUS   float64 `json:"msg_per_server_task_s"`  // server threads' own run time
	SoftirqShare     float64 `json:"softirq_share"`          // softirq / busy on the server's CPU
	ServerRunq       float64 `json:"server_runq"`            // s/s the server's threads waited for a CPU
	VolSwPerMsg      float64 `json:"server_vol_sw_per_msg"`  // server voluntary switches per message
	HasTCP           bool    `json:"has_tcp"`                // ss ran: the next three hold
	SegsInPerMsg     float64 `json:"segs_in_per_msg"`        // segments from the client
	PureAcksInPerMsg float64 `json:"pure_acks_in_per_msg"`   // of those, no data
	AcksOutPerMsg    float64 `json:"acks_out_per_msg"`       // pure ACKs from the server
	ClientIPIPerMsg  float64 `json:"client_cpu_ipi_per_msg"` // RES+CAL to the client's CPU
	ServerIPIPerMsg  float64 `json:"server_cpu_ipi_per_msg"` // RES+CAL to the server's CPU
	ClientCores      float64 `json:"client_cores"`
}

// derive computes a run's figures from its two snapshots; hz is USER_HZ.
func derive(a, b snapshot, hz float64) (figures, error) {
	var f figures
	f.Seconds = b.At.Sub(a.At).Seconds()
	if b.Messages <= a.Messages || f.Seconds <= 0 {
		return f, fmt.Errorf("no messages in the window (%d -> %d over %.3f s)", a.Messages, b.Messages, f.Seconds)
	}
	m := float64(b.Messages - a.Messages)
	f.Messages = m
	f.MsgPerS = m / f.Seconds
	busy := sub(a.CPUBusy, b.CPUBusy)
	busyS := float64(busy) / hz
	f.ServerBusy = busyS / f.Seconds
	if busyS > 0 {
		f.MsgPerBusyCPUS = m / busyS
		f.SoftirqShare = float64(sub(a.CPUSoftirq, b.CPUSoftirq)) / float64(busy)
	}
	if taskS := float64(sub(a.ServerRunNs, b.ServerRunNs)) / 1e9; taskS > 0 {
		f.MsgPerTaskCPUS = m / taskS
	}
	f.ServerRunq = float64(sub(a.ServerWait, b.ServerWait)) / 1e9 / f.Seconds
	f.VolSwPerMsg = float64(sub(a.ServerVolSw, b.ServerVolSw)) / m
	if a.HasTCP && b.HasTCP {
		var d tcpCounters
		for k, cb := range b.TCP {
			ca, ok := a.TCP[k]
			if !ok {
				continue // opened after A (a /metrics request)
			}
			d.SegsIn += sub(ca.SegsIn, cb.SegsIn)
			d.SegsOut += sub(ca.SegsOut, cb.SegsOut)
			d.DataSegsIn += sub(ca.DataSegsIn, cb.DataSegsIn)
			d.DataSegsOut += sub(ca.DataSegsOut, cb.DataSegsOut)
		}
		f.HasTCP = true
		f.SegsInPerMsg = float64(d.SegsIn) / m
		f.PureAcksInPerMsg = float64(sub(d.DataSegsIn, d.SegsIn)) / m
		f.AcksOutPerMsg = float64(sub(d.DataSegsOut, d.SegsOut)) / m
	}
	f.ClientIPIPerMsg = float64(sub(a.ClientIPI, b.ClientIPI)) / m
	f.ServerIPIPerMsg = float64(sub(a.ServerIPI, b.ServerIPI)) / m
	f.ClientCores = float64(sub(a.ClientRunNs, b.ClientRunNs)) / 1e9 / f.Seconds
	return f, nil
}

// sub is b - a, 0 when a counter went backwards (a thread that ended
// took its counts with it).
func sub(a, b uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

// runResult is one run of one client.
type runResult struct {
	Round   int      `json:"round"`
	Client  string   `json:"client"`
	Figures *figures `json:"figures,omitempty"` // nil: the run measured nothing
	Failure string   `json:"failure,omitempty"` // why it measured nothing
	Errors  string   `json:"errors,omitempty"`  // the client's errors: the run is invalid
}

// rotate is the order of round r (0-based): the list rotated left by r.
func rotate(clients []string, r int) []string {
	n := len(clients)
	out := make([]string, n)
	for i := range clients {
		out[i] = clients[(i+r)%n]
	}
	return out
}

// row is a client's line of the table: means over its measured runs.
type row struct {
	Client  string  `json:"client"`
	Runs    int     `json:"runs"`    // measured
	Failed  int     `json:"failed"`  // measured nothing
	Invalid int     `json:"invalid"` // measured, but the client had errors
	Mean    figures `json:"mean"`    // HasTCP only when every run had ss
	// Relative is the median over rounds of this client's MsgPerBusyCPUS
	// over the ceiling client's in the same round (paired, so a machine
	// that drifts between rounds moves both); RelMin and RelMax are the
	// rounds' extremes. 0: no round measured both.
	Relative       float64 `json:"relative"`
	RelMin, RelMax float64 `json:"-"`
	Min            float64 `json:"min_msg_per_server_cpu_s"`
	Max            float64 `json:"max_msg_per_server_cpu_s"`
	Flags          string  `json:"flags,omitempty"`
	Skipped        string  `json:"skipped,omitempty"` // not run at all, and why
}

// clientCapped is when the client, not the server, set the pace.
func (r row) clientCapped() bool { return r.Mean.ClientCores >= 0.9 && r.Mean.ServerBusy < 0.9 }

// contended is the server's run-queue wait (s/s) above which another
// runnable thread shared the server's CPU: its busy time is then not all
// the server's.
const contended = 0.1

// summarize builds the table's rows, in the order of clients.
func summarize(clients []string, runs []runResult, skipped map[string]string) []row {
	var rows []row
	for _, c := range clients {
		r := row{Client: c, Skipped: skipped[c], Min: math.Inf(1), Max: math.Inf(-1)}
		var ms []figures
		var why []string
		for _, run := range runs {
			if run.Client != c {
				continue
			}
			if run.Figures == nil {
				r.Failed++
				why = append(why, run.Failure)
				continue
			}
			if run.Errors != "" {
				r.Invalid++
				why = append(why, run.Errors)
			}
			ms = append(ms, *run.Figures)
			r.Min = math.Min(r.Min, run.Figures.MsgPerBusyCPUS)
			r.Max = math.Max(r.Max, run.Figures.MsgPerBusyCPUS)
		}
		r.Runs = len(ms)
		if r.Runs == 0 {
			r.Min, r.Max = 0, 0
		}
		r.Mean = mean(ms)
		var flags []string
		if r.Runs > 0 && r.clientCapped() {
			flags = append(flags, "client-capped")
		}
		if r.Runs > 0 && r.Mean.ServerRunq > contended {
			flags = append(flags, fmt.Sprintf("contended: server waited %.2f s/s for its CPU", r.Mean.ServerRunq))
		}
		if r.Invalid > 0 {
			flags = append(flags, fmt.Sprintf("INVALID: client errors in %d of %d runs", r.Invalid, r.Runs))
		}
		if r.Failed > 0 {
			flags = append(flags, fmt.Sprintf("%d of %d runs failed", r.Failed, r.Runs+r.Failed))
		}
		r.Flags = strings.Join(flags, "; ")
		if len(why) > 0 {
			r.Flags += " — " + strings.Join(slices.Compact(why), "; ")
		}
		rows = append(rows, r)
	}
	base := map[int]float64{} // round -> the ceiling client's figure
	for _, run := range runs {
		if run.Client == "ceiling" && run.Figures != nil && run.Figures.MsgPerBusyCPUS > 0 {
			base[run.Round] = run.Figures.MsgPerBusyCPUS
		}
	}
	for i := range rows {
		var ratios []float64
		for _, run := range runs {
			if b := base[run.Round]; run.Client == rows[i].Client && run.Figures != nil && b > 0 {
				ratios = append(ratios, run.Figures.MsgPerBusyCPUS/b)
			}
		}
		if len(ratios) > 0 {
			slices.Sort(ratios)
			rows[i].Relative = median(ratios)
			rows[i].RelMin, rows[i].RelMax = ratios[0], ratios[len(ratios)-1]
		}
	}
	return rows
}

// median of sorted xs (not empty).
func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func mean(fs []figures) figures {
	var m figures
	if len(fs) == 0 {
		return m
	}
	m.HasTCP = true
	for _, f := range fs {
		m.Seconds += f.Seconds
		m.Messages += f.Messages
		m.MsgPerS += f.MsgPerS
		m.ServerBusy += f.ServerBusy
		m.MsgPerBusyCPUS += f.MsgPerBusyCPUS
		m.MsgPerTaskCPUS += f.MsgPerTaskCPUS
		m.SoftirqShare += f.SoftirqShare
		m.ServerRunq += f.ServerRunq
		m.VolSwPerMsg += f.VolSwPerMsg
		m.HasTCP = m.HasTCP && f.HasTCP
		m.SegsInPerMsg += f.SegsInPerMsg
		m.PureAcksInPerMsg += f.PureAcksInPerMsg
		m.AcksOutPerMsg += f.AcksOutPerMsg
		m.ClientIPIPerMsg += f.ClientIPIPerMsg
		m.ServerIPIPerMsg += f.ServerIPIPerMsg
		m.ClientCores += f.ClientCores
	}
	n := float64(len(fs))
	for _, p := range []*float64{&m.Seconds, &m.Messages, &m.MsgPerS, &m.ServerBusy, &m.MsgPerBusyCPUS,
		&m.MsgPerTaskCPUS, &m.SoftirqShare, &m.ServerRunq, &m.VolSwPerMsg, &m.SegsInPerMsg, &m.PureAcksInPerMsg,
		&m.AcksOutPerMsg, &m.ClientIPIPerMsg, &m.ServerIPIPerMsg, &m.ClientCores} {
		*p /= n
	}
	return m
}

// tableHeader and the row format are the markdown table's columns.
const tableHeader = "| client | runs | msg/s | srv msg/CPU-s | vs ceiling, paired by round: median (range) | spread (min–max) | srv msg/task-s | srv CPU busy | softirq | srv vol sw/msg | segs in/msg | pure ACKs in/msg | ACKs out/msg | IPI→client/msg | client cores | flags |\n" +
	"|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"

// renderTable is the markdown table of rows.
func renderTable(rows []row) string {
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %s | 0 | - | - | - | - | - | - | - | - | - | - | - | - | - | skipped: %s |\n", r.Client, cell(r.Skipped))
			continue
		}
		if r.Runs == 0 {
			fmt.Fprintf(&b, "| %s | 0 | - | - | - | - | - | - | - | - | - | - | - | - | - | %s |\n", r.Client, cell(r.Flags))
			continue
		}
		m := r.Mean
		rel := "-"
		if r.Relative > 0 {
			rel = fmt.Sprintf("%.2fx", r.Relative)
			if r.RelMax > r.RelMin {
				rel += fmt.Sprintf(" (%.2f–%.2f)", r.RelMin, r.RelMax)
			}
		}
		segs, pure, acks := "-", "-", "-"
		if m.HasTCP {
			segs, pure, acks = f3(m.SegsInPerMsg), f3(m.PureAcksInPerMsg), f3(m.AcksOutPerMsg)
		}
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s–%s | %s | %.2f | %.0f%% | %s | %s | %s | %s | %s | %.2f | %s |\n",
			r.Client, r.Runs, si(m.MsgPerS), si(m.MsgPerBusyCPUS), rel, si(r.Min), si(r.Max), si(m.MsgPerTaskCPUS),
			m.ServerBusy, 100*m.SoftirqShare, f3(m.VolSwPerMsg), segs, pure, acks, f3(m.ClientIPIPerMsg), m.ClientCores, cell(r.Flags))
	}
	return b.String()
}

// runLine is the line printed as a run ends.
func runLine(r runResult, rounds int) string {
	head := fmt.Sprintf("round %d/%d  %-20s", r.Round, rounds, r.Client)
	if r.Figures == nil {
		return head + "  FAILED: " + r.Failure
	}
	f := r.Figures
	tcp := "segs in/msg -  ACKs out/msg -"
	if f.HasTCP {
		tcp = fmt.Sprintf("segs in/msg %s (pure ACK %s)  ACKs out/msg %s", f3(f.SegsInPerMsg), f3(f.PureAcksInPerMsg), f3(f.AcksOutPerMsg))
	}
	s := fmt.Sprintf("%s  %s msg/s  srv %s msg/CPU-s (task %s)  busy %.2f  softirq %.0f%%  runq %.2f  vol sw/msg %s  %s  IPI/msg client %s server %s  client %.2f cores",
		head, si(f.MsgPerS), si(f.MsgPerBusyCPUS), si(f.MsgPerTaskCPUS), f.ServerBusy, 100*f.SoftirqShare, f.ServerRunq,
		f3(f.VolSwPerMsg), tcp, f3(f.ClientIPIPerMsg), f3(f.ServerIPIPerMsg), f.ClientCores)
	if r.Errors != "" {
		s += "  INVALID: " + r.Errors
	}
	return s
}

// cell makes s safe inside a markdown table cell: one line, pipes escaped.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}

func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

func si(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

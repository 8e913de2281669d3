// Package fanout is the Pusher fan-out scenario: --connections
// subscribers spread over --channels public channels of a Pusher Channels
// server (protocol 7), and --publishers signed REST publishers. An
// operation is one publish request; throughput is deliveries to
// subscribers, and every delivery is timed from its publish. See fanout.go
// for the design.
//
// It registers itself with load.Register; import it (or
// load/scenario/all) for `--scenario fanout`.
package fanout

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// Name is the scenario's registered name, and its summary block's key.
const Name = "fanout"

// Defaults.
const (
	DefaultURL        = "ws://127.0.0.1:6001"
	DefaultAppID      = "app-id"
	DefaultKey        = "app-key"
	DefaultSecret     = "app-secret"
	DefaultChannels   = 1
	DefaultPublishers = 1
	// Grace is how long deliveries are awaited after the window.
	Grace = load.Drain
)

// BatchLadder is the harness's batch ladder for fanout: a batch is events
// per publish request, and Pusher's batch_events takes at most 10.
var BatchLadder = []int{1, 10}

func init() {
	load.Register(load.Definition{
		Name:       Name,
		Help:       "Pusher Channels fan-out: WebSocket subscribers, signed REST publishers",
		DefaultURL: DefaultURL,
		NewParams: func() load.Params {
			return &Params{AppID: DefaultAppID, Key: DefaultKey, Secret: DefaultSecret, Channels: DefaultChannels, Publishers: DefaultPublishers}
		},
		Report: report,
		Target: &load.TargetDef{
			Key:         "fanout",
			Parse:       parseTarget,
			BatchLadder: BatchLadder,
			BatchNote:   "events per publish request; Pusher's batch_events takes at most 10",
		},
		// Each server's deliveries before and after --split-at: a
		// resilience point (summary.fanout.servers, split_at_ns).
		Fault: &load.FaultDef{
			SplitArgs: func(fraction float64) []string {
				return []string{"--split-at", strconv.FormatFloat(fraction, 'g', -1, 64)}
			},
		},
	})
}

// Params are fanout's own knobs.
type Params struct {
	AppID  string `json:"app_id"`
	Key    string `json:"key"`
	Secret string `json:"-"` // never recorded
	// Channels the subscribers are spread over, evenly.
	Channels int `json:"channels"`
	// Publishers is the number of concurrent REST publishers.
	Publishers int `json:"publishers"`
	// SplitAt, in (0, 1), splits each server's delivery accounting at
	// that fraction of the window (before and after): the harness's FAULT
	// time. 0: no split.
	SplitAt float64 `json:"split_at,omitempty"`
}

// MultiServer: repeated --url spreads subscribers and publishes over
// several servers of one cluster (load.MultiServer).
func (p *Params) MultiServer() bool { return true }

// Flags binds the Pusher app's credentials, --channels and --publishers.
func (p *Params) Flags(fs *flag.FlagSet) {
	fs.StringVar(&p.AppID, "app-id", p.AppID, "Pusher app id")
	fs.StringVar(&p.Key, "key", p.Key, "Pusher app key")
	fs.StringVar(&p.Secret, "secret", p.Secret, "Pusher app secret (never printed or recorded)")
	fs.IntVar(&p.Channels, "channels", p.Channels, "channels the subscribers are spread over, evenly")
	fs.IntVar(&p.Publishers, "publishers", p.Publishers, "concurrent REST publishers")
	fs.Float64Var(&p.SplitAt, "split-at", p.SplitAt, "split each server's delivery accounting at this fraction of the window, 0 < f < 1 (the harness's FAULT time); 0: none")
}

// Validate checks the credentials and the spread.
func (p *Params) Validate(c *load.Config, given func(string) bool) error {
	if p.AppID == "" || p.Key == "" || p.Secret == "" {
		return errors.New("--app-id, --key and --secret must not be empty for --scenario fanout")
	}
	if p.Channels < 1 {
		return fmt.Errorf("--channels %d: must be at least 1", p.Channels)
	}
	if p.Channels > c.Connections {
		return fmt.Errorf("--channels %d exceeds --connections %d: a channel without subscribers has nothing to deliver", p.Channels, c.Connections)
	}
	if p.Publishers < 1 {
		return fmt.Errorf("--publishers %d: must be at least 1", p.Publishers)
	}
	if p.SplitAt < 0 || p.SplitAt >= 1 || p.SplitAt != p.SplitAt {
		return fmt.Errorf("--split-at %v: want a fraction of the window, 0 < f < 1 (0: none)", p.SplitAt)
	}
	if c.Payload == payload.Random {
		return errors.New("--payload random is binary and Pusher event data is text: use constant or json with --scenario fanout")
	}
	return nil
}

// New builds the driver.
func (p *Params) New(c *load.Config, pool *payload.Pool) (load.Scenario, error) {
	return newFanout(c, p, pool), nil
}

// Summary is fanout's block of the summary (summary.fanout): the delivery
// accounting.
type Summary struct {
	EventsPublished    int64 `json:"events_published"`
	DeliveriesExpected int64 `json:"deliveries_expected"`
	// Delivered counts every delivery of an event published inside the
	// window that arrived within the grace. Duplicates is the part of it
	// beyond DeliveriesExpected: deliveries the successful publishes do
	// not account for (an event delivered twice, or one whose publish the
	// generator counted as failed, a timeout after the server had queued
	// it). DeliveredPct is the expected deliveries that arrived,
	// 100 * (Delivered - Duplicates) / DeliveriesExpected, so never above
	// 100.
	Delivered      int64            `json:"delivered"`
	Duplicates     int64            `json:"duplicates"`
	DeliveredPct   float64          `json:"delivered_pct"`
	Late           int64            `json:"late"` // arrived after the grace period
	GraceNs        int64            `json:"grace_ns"`
	HTTPFailures   map[string]int64 `json:"http_failures"` // by reason: "status_500", "ECONNRESET", ...
	RateLimited429 int64            `json:"rate_limited_429"`
	PublishLatency load.Latency     `json:"publish_latency_ns"` // REST round trip
	// SplitAtNs is where --split-at split each server's accounting,
	// from the window's start (0: not split).
	SplitAtNs int64 `json:"split_at_ns,omitempty"`
	// Servers are the --url servers in order, each one's share: the
	// subscribers it held and lost, the publishes sent through it, and
	// the deliveries its subscribers were owed and received.
	Servers []ServerCount `json:"servers"`
}

// ServerCount is one server's share of a fan-out run. Expected counts
// each event once per subscriber of its channel on this server that was
// connected when it was published, so a node that dropped its clients
// owes nothing afterwards, and is no loss on the others.
type ServerCount = load.ServerShare

// report is fanout's part of the text report.
func report(res *load.Result) (warnings []string, rows []load.ReportRow) {
	var f Summary
	if ok, err := res.Summary.Block(Name, &f); !ok || err != nil {
		return nil, nil
	}
	if f.DeliveredPct < 100 && f.DeliveriesExpected > 0 {
		warnings = append(warnings, fmt.Sprintf("UNDELIVERED: %.2f%% of expected deliveries arrived within the %v grace", f.DeliveredPct, time.Duration(f.GraceNs)))
	}
	rows = append(rows, load.ReportRow{Name: "delivered", Value: fmt.Sprintf("%d of %d expected (%.2f%%), %d late, %d events published", f.Delivered-f.Duplicates, f.DeliveriesExpected, f.DeliveredPct, f.Late, f.EventsPublished)})
	if f.Duplicates > 0 {
		rows = append(rows, load.ReportRow{Name: "duplicates", Value: fmt.Sprintf("%d deliveries beyond the expected count (an event delivered twice, or one whose publish was counted as failed)", f.Duplicates)})
	}
	if f.RateLimited429 > 0 {
		rows = append(rows, load.ReportRow{Name: "rate limited", Value: fmt.Sprintf("%d HTTP 429", f.RateLimited429)})
	}
	rows = append(rows, load.ReportRow{Name: "publish", Value: load.LatencyLine(f.PublishLatency)})
	if len(f.Servers) > 1 || f.SplitAtNs > 0 {
		for _, sv := range f.Servers {
			v := fmt.Sprintf("%d conns (%d dropped), %d publishes (%d failed), delivered %d of %d (%s)",
				sv.Connections, sv.Dropped, sv.Publishes, sv.PublishFailures, sv.Delivered, sv.Expected, sv.PctText())
			if sv.Before != nil && sv.After != nil {
				v += fmt.Sprintf("; before %v %s, after %s", time.Duration(f.SplitAtNs).Round(time.Millisecond), sv.Before.PctText(), sv.After.PctText())
			}
			rows = append(rows, load.ReportRow{Name: "server " + sv.URL, Value: v})
		}
	}
	return warnings, rows
}

// NothingArrived says what was published when nothing was delivered.
func (f *fanout) NothingArrived(res *load.Result, why string) error {
	var s Summary
	res.Summary.Block(Name, &s)
	return fmt.Errorf("%w: %w: %d events published, 0 of %d expected deliveries arrived%s",
		load.ErrNothingArrived, ErrNotDelivered, s.EventsPublished, s.DeliveriesExpected, why)
}

// Target is fanout's block of a target file: the Pusher endpoint and an
// app's credentials (the secret signs REST publishes and is never
// recorded in a result).
type Target struct {
	load.ServerURLs        // url, or urls: several nodes of one cluster
	AppID           string `json:"app_id"`
	Key             string `json:"key"`
	Secret          string `json:"secret"`
	Channels        int    `json:"channels,omitempty"`
}

func parseTarget(raw json.RawMessage) (load.TargetBlock, error) {
	var t Target
	if err := load.DecodeStrict(raw, &t); err != nil {
		return nil, err
	}
	errs := t.ServerURLs.Check()
	if t.Channels < 0 {
		errs = append(errs, load.Fieldf("channels", "%d is negative", t.Channels))
	}
	if t.AppID == "" || t.Key == "" || t.Secret == "" {
		errs = append(errs, errors.New("app_id, key and secret are all needed"))
	}
	return &t, errors.Join(errs...)
}

// URLField names URL (the Pusher endpoint; the generator adds the app
// path) in errors.
func (t *Target) URLField() string { return t.URLFieldOf("fanout") }

// Secrets is the app secret.
func (t *Target) Secrets() map[string]string { return map[string]string{"secret": t.Secret} }

// Args are a --url for each of urls but the first (the harness passes
// that one), the credentials and, when set, the channel count.
func (t *Target) Args() []string {
	a := append(t.MoreURLArgs(), "--app-id", t.AppID, "--key", t.Key, "--secret", t.Secret)
	if t.Channels > 0 {
		a = append(a, "--channels", fmt.Sprint(t.Channels))
	}
	return a
}

// CheckLadder refuses a rung with fewer connections than channels: a
// channel without subscribers delivers nothing.
func (t *Target) CheckLadder(minConnections int) error {
	if t.Channels > 1 && minConnections < t.Channels {
		return load.Fieldf("channels", "%d is more than the %d connections of the smallest rung: a channel without subscribers delivers nothing", t.Channels, minConnections)
	}
	return nil
}

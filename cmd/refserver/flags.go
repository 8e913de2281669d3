package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
)

type options struct {
	cfg             refserver.Config
	shutdownTimeout time.Duration
	// readyDelay and stopDelay make refserver a server that is slow to
	// boot and to stop: it waits readyDelay before it listens, and
	// stopDelay after SIGTERM (still serving) before it shuts down.
	readyDelay, stopDelay time.Duration
}

// parseFlags fills options from one FlagSet; every error names its flag.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{shutdownTimeout: 5 * time.Second}
	c := &o.cfg
	fs := flag.NewFlagSet("refserver", flag.ContinueOnError)
	// Errors are reported once, by main; usage only on -h.
	fs.SetOutput(io.Discard)
	addr := addrFlag(refserver.DefaultAddr)
	fs.Var(&addr, "addr", "`host:port` to listen on (port 0: any free port)")
	fs.StringVar(&c.AppID, "app-id", refserver.DefaultAppID, "Pusher app `id` for the REST API")
	fs.StringVar(&c.Key, "key", refserver.DefaultKey, "Pusher app `key` (WebSocket path /app/KEY and REST auth_key)")
	fs.StringVar(&c.Secret, "secret", refserver.DefaultSecret, "Pusher app `secret` for REST signatures")
	fs.StringVar(&c.Cluster, "cluster", "", "make this server a node of a cluster: relay every published event to the other nodes, and deliver theirs, over the NATS server at this `nats://HOST:PORT` (core subjects, at most once; connections and presence stay per node)")
	fs.DurationVar(&c.ClusterDelay, "cluster-delay", 0, "a slower clustering, to compare two: answer each REST publish this long after relaying it, as after a bus's round trip (needs --cluster)")
	maxMsg := byteSize(refserver.DefaultMaxMessageBytes)
	fs.Var(&maxMsg, "max-message-bytes", "largest WebSocket message in `bytes` (65536, 64KiB, 1MiB); larger closes the socket with 1009")
	maxBody := byteSize(refserver.DefaultMaxBodyBytes)
	fs.Var(&maxBody, "max-body-bytes", "largest REST request body in `bytes`; larger is answered 413 (an announced Content-Length before anything is read)")
	maxInflight := byteSize(0)
	fs.Var(&maxInflight, "max-inflight-body-bytes", "most `bytes` of REST bodies held at once over all requests; past it a request is answered 503 (default the larger of 64MiB and twice --max-body-bytes)")
	maxSubs := positiveInt(refserver.DefaultMaxSubscriptions)
	fs.Var(&maxSubs, "max-subscriptions", "most `channels` one Pusher socket may be subscribed to; a subscribe past it gets pusher:error code 4300")
	maxBatch := positiveInt(refserver.DefaultMaxBatch)
	fs.Var(&maxBatch, "max-batch", "most `events` per batch_events request (real Pusher: 10)")
	sendQueue := positiveInt(refserver.DefaultSendQueue)
	fs.Var(&sendQueue, "send-queue", "`frames` queued per Pusher socket before it is closed with 4100 as a slow consumer (at least --max-batch)")
	writeTimeout := positiveDuration(refserver.DefaultWriteTimeout)
	fs.Var(&writeTimeout, "write-timeout", "longest `duration` a single write to a socket may block before the client is dropped")
	activity := positiveDuration(refserver.DefaultActivityTimeout)
	fs.Var(&activity, "activity-timeout", "activity_timeout announced in connection_established (a `duration`, whole seconds, not enforced)")
	garbageBytes := byteSize(0)
	fs.Var(&garbageBytes, "garbage", "`bytes` allocated and dropped per message echoed and per frame delivered: plants an allocation regression of known size, the collector's work (4KiB; default none)")
	ballast := byteSize(0)
	fs.Var(&ballast, "conn-ballast", "`bytes` every socket keeps, written, while it is open: plants a memory regression of known size per connection (65536, 4KiB; default none)")
	spin := nonNegativeDuration(0)
	fs.Var(&spin, "spin", "CPU `duration` burnt (a busy loop) per message echoed and per frame delivered: plants a regression of known size (0: none)")
	editorCap := positiveInt(refserver.DefaultRoomsEditorCap)
	fs.Var(&editorCap, "rooms-editor-cap", "most `editors` in one /rooms room; an editor joining a full room is joined as a viewer (reason editor_cap)")
	ring := positiveInt(refserver.DefaultRoomsRing)
	fs.Var(&ring, "rooms-ring", "recent `ops` each room keeps for a join with since to resume from; a since older than that gets resync")
	skipEvery := nonNegativeInt(0)
	fs.Var(&skipEvery, "rooms-skip-every", "test knob: every `N`th accepted patch bumps a room's version by 2, so clients see a gap (0: off)")
	beat := positiveDuration(refserver.DefaultRoomsPresenceBeat)
	fs.Var(&beat, "rooms-presence-beat", "how often (`duration`) a room sends the presence that changed: at most one message per member per beat")
	rate := positiveInt(refserver.DefaultRoomsRateLimit)
	fs.Var(&rate, "rooms-rate-limit", "`messages` per second per /rooms connection, burst the same, presence not counted; past it error 429 and the patch is dropped")
	roomsQueue := positiveInt(0)
	fs.Var(&roomsQueue, "rooms-send-queue", "`frames` queued per /rooms connection before it is closed with 1008 as a slow consumer (default the larger of 4096 and --rooms-ring+1)")
	readyDelay := nonNegativeDuration(0)
	fs.Var(&readyDelay, "ready-delay", "wait this `duration` before listening, as a server that loads for seconds does (a slow server to compare with: docs/refserver.md)")
	stopDelay := nonNegativeDuration(0)
	fs.Var(&stopDelay, "stop-delay", "after SIGTERM, keep serving this `duration` before shutting down, as a server that drains does (a second signal ends it at once)")
	shutdown := positiveDuration(o.shutdownTimeout)
	fs.Var(&shutdown, "shutdown-timeout", "how long (`duration`) SIGTERM waits for close handshakes before cutting sockets")

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: refserver [flags]")
			fs.PrintDefaults()
			return o, err
		}
		return o, usageError{err} // the flag package names the flag
	}
	if fs.NArg() > 0 {
		return o, usagef("unexpected argument %q (refserver takes flags only)", fs.Arg(0))
	}
	for name, v := range map[string]string{"--app-id": c.AppID, "--key": c.Key, "--secret": c.Secret} {
		if v == "" {
			return o, usagef("%s: must not be empty", name)
		}
	}
	c.Addr = string(addr)
	c.MaxMessageBytes = int64(maxMsg)
	c.MaxBodyBytes = int64(maxBody)
	c.MaxInflightBodyBytes = int64(maxInflight)
	c.MaxSubscriptions = int(maxSubs)
	c.MaxBatch = int(maxBatch)
	c.SendQueue = int(sendQueue)
	c.WriteTimeout = time.Duration(writeTimeout)
	c.ActivityTimeout = time.Duration(activity)
	c.Spin = time.Duration(spin)
	c.ConnBallast = int64(ballast)
	c.Garbage = int64(garbageBytes)
	c.RoomsEditorCap = int(editorCap)
	c.RoomsRing = int(ring)
	c.RoomsSkipEvery = int(skipEvery)
	c.RoomsPresenceBeat = time.Duration(beat)
	c.RoomsRateLimit = int(rate)
	c.RoomsSendQueue = int(roomsQueue)
	o.shutdownTimeout = time.Duration(shutdown)
	o.readyDelay, o.stopDelay = time.Duration(readyDelay), time.Duration(stopDelay)
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--ready-delay", o.readyDelay}, {"--stop-delay", o.stopDelay}} {
		if d.v > time.Minute {
			return o, usagef("%s: %s is over 1m", d.name, d.v)
		}
	}
	if c.SendQueue < c.MaxBatch {
		return o, usagef("--send-queue: %d is less than --max-batch %d; a full batch could never be queued", c.SendQueue, c.MaxBatch)
	}
	if c.MaxInflightBodyBytes != 0 && c.MaxInflightBodyBytes < 2*c.MaxBodyBytes {
		return o, usagef("--max-inflight-body-bytes: %d is less than twice --max-body-bytes (%d); a body of unannounced length could never be read", c.MaxInflightBodyBytes, c.MaxBodyBytes)
	}
	if c.RoomsSendQueue != 0 && c.RoomsSendQueue <= c.RoomsRing {
		return o, usagef("--rooms-send-queue: %d is not more than --rooms-ring %d; a full resume (joined and the ring) could never be queued", c.RoomsSendQueue, c.RoomsRing)
	}
	if c.ActivityTimeout < time.Second {
		return o, usagef("--activity-timeout: %s is under 1s", c.ActivityTimeout)
	}
	if c.Cluster != "" {
		if err := refserver.CheckClusterURL(c.Cluster); err != nil {
			return o, usagef("--cluster: %q is not a nats://HOST:PORT URL", c.Cluster)
		}
	}
	switch {
	case c.ClusterDelay < 0:
		return o, usagef("--cluster-delay: %s is negative", c.ClusterDelay)
	case c.ClusterDelay > 0 && c.Cluster == "":
		return o, usagef("--cluster-delay: needs --cluster (a server alone relays nothing)")
	case c.ClusterDelay > 10*time.Second:
		return o, usagef("--cluster-delay: %s is over 10s", c.ClusterDelay)
	}
	return o, nil
}

// addrFlag is a host:port with a numeric port.
type addrFlag string

func (a *addrFlag) String() string { return string(*a) }
func (a *addrFlag) Set(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("want host:port: %w", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("port %q is not a number 0-65535", port)
	}
	*a = addrFlag(s)
	return nil
}

// byteSize is a positive byte count, plain or with a KiB/MiB/GiB suffix.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }
func (b *byteSize) Set(s string) error {
	mult := int64(1)
	num := s
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("want a positive byte count like 65536, 64KiB or 1MiB")
	}
	if n > (1<<62)/mult {
		return fmt.Errorf("too large")
	}
	*b = byteSize(n * mult)
	return nil
}

// positiveInt is an integer >= 1.
type positiveInt int

func (p *positiveInt) String() string { return strconv.Itoa(int(*p)) }
func (p *positiveInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return fmt.Errorf("want an integer >= 1")
	}
	*p = positiveInt(n)
	return nil
}

// nonNegativeInt is an integer >= 0.
type nonNegativeInt int

func (p *nonNegativeInt) String() string { return strconv.Itoa(int(*p)) }
func (p *nonNegativeInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return fmt.Errorf("want an integer >= 0")
	}
	*p = nonNegativeInt(n)
	return nil
}

// positiveDuration is a Go duration > 0.
type positiveDuration time.Duration

func (d *positiveDuration) String() string { return time.Duration(*d).String() }
func (d *positiveDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil || v <= 0 {
		return fmt.Errorf("want a positive duration like 500ms or 10s")
	}
	*d = positiveDuration(v)
	return nil
}

// nonNegativeDuration is a Go duration >= 0.
type nonNegativeDuration time.Duration

func (d *nonNegativeDuration) String() string { return time.Duration(*d).String() }
func (d *nonNegativeDuration) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("want a duration >= 0 like 0, 2us or 1ms")
	}
	*d = nonNegativeDuration(v)
	return nil
}

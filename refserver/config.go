package refserver

import (
	"errors"
	"fmt"
	"time"
)

// Config is everything the server can be told. Zero fields take the
// defaults below (see withDefaults); negative sizes are refused by New.
type Config struct {
	// Addr is where ListenAndServe listens (default 127.0.0.1:6001).
	Addr string

	// The one app this server knows (defaults app-id, app-key, app-secret).
	AppID, Key, Secret string

	// Cluster, a NATS URL (nats://HOST:PORT), makes this server a node of
	// a cluster: every event published through its REST API is relayed
	// to the other nodes over NATS core (at most once), and every event
	// relayed by another node is delivered to this node's subscribers
	// (cluster.go). Connections, subscriptions and presence stay per
	// node. Empty: a server alone.
	Cluster string

	// ClusterDelay is a slower clustering, for comparing two (seed 003
	// compares a Redis adapter with Erlang's mesh): a node answers a REST
	// publish only ClusterDelay after relaying it, as it would after a
	// bus's round trip. 0: at once. Needs Cluster.
	ClusterDelay time.Duration

	// MaxMessageBytes is the largest WebSocket message accepted; a larger
	// one closes that socket with 1009 (default 1 MiB).
	MaxMessageBytes int64

	// MaxBatch is the most events one batch_events request may carry
	// (default 1000, so a harness batch ladder up to 1000 works; real
	// Pusher caps it at 10).
	MaxBatch int

	// MaxBodyBytes caps a REST request body; larger gets 413 (default
	// 4 MiB: a full batch of MaxBatch events with data of up to about
	// 3 KiB each). A body announced larger (Content-Length) is refused
	// before it is read.
	MaxBodyBytes int64

	// MaxInflightBodyBytes caps the memory held by REST bodies being read
	// or handled at once, over all requests; a request that would go past
	// it gets 503 with Retry-After (default 64 MiB). Each request reserves
	// its Content-Length, or twice MaxBodyBytes when the length is not
	// announced (a chunked body grows its buffer), so it must be at least
	// that.
	MaxInflightBodyBytes int64

	// MaxSubscriptions is how many channels one Pusher socket may be
	// subscribed to at once; a subscribe past it gets a pusher:error with
	// code 4300 and the socket stays open (default 100).
	MaxSubscriptions int

	// SendQueue is how many frames may wait for one Pusher socket, at
	// least MaxBatch. A publish that would overfill it closes that socket
	// with 4100 "over capacity" (a slow consumer) and counts it (default
	// 65536).
	SendQueue int

	// WriteTimeout bounds one write to a socket; a client that takes
	// longer to accept bytes is disconnected (default 10s).
	WriteTimeout time.Duration

	// ActivityTimeout is announced in connection_established, in whole
	// seconds (default 120s). The server does not enforce it.
	ActivityTimeout time.Duration

	// Spin is CPU burnt (a busy loop, not a sleep) per message echoed and
	// per frame delivered to a Pusher socket: a regression of known size,
	// planted on purpose (docs/compare.md). 0: none.
	Spin time.Duration

	// Garbage is bytes allocated and dropped per message echoed and per
	// frame delivered to a Pusher socket: an allocation regression of
	// known size, the collector's work, planted on purpose
	// (docs/compare.md, "Why is it slower"). 0: none.
	Garbage int64

	// ConnBallast is bytes every socket (echo, Pusher, rooms) keeps,
	// written, for as long as it is open: a memory regression of known
	// size per connection, planted on purpose (docs/refserver.md). 0:
	// none.
	ConnBallast int64

	// The /rooms protocol (docs/rooms.md).

	// RoomsEditorCap is how many editors a room takes; an editor joining a
	// full room is joined as a viewer with reason "editor_cap" (default 100).
	RoomsEditorCap int

	// RoomsRing is how many recent ops each room keeps for a join with
	// "since" to resume from; older than that gets "resync" (default 1000).
	RoomsRing int

	// RoomsSkipEvery makes every Nth accepted patch of a room bump its
	// version by 2 instead of 1, so clients see a gap: a test knob for gap
	// detection. 0: off (the default).
	RoomsSkipEvery int

	// RoomsPresenceBeat is how often a room sends its members the
	// presence that changed, one message per member per beat at most
	// (default 50ms).
	RoomsPresenceBeat time.Duration

	// RoomsRateLimit is each /rooms connection's token bucket, in
	// messages per second, burst the same; presence is not counted. A
	// message over it gets error 429 and a patch is not applied
	// (default 60).
	RoomsRateLimit int

	// RoomsSendQueue is how many frames may wait for one /rooms
	// connection; one more closes it with 1008 as a slow consumer. It must
	// hold a join's reply and a full resume: at least RoomsRing+1
	// (default 4096).
	RoomsSendQueue int
}

// Defaults.
const (
	DefaultAddr             = "127.0.0.1:6001"
	DefaultAppID            = "app-id"
	DefaultKey              = "app-key"
	DefaultSecret           = "app-secret"
	DefaultMaxMessageBytes  = 1 << 20
	DefaultMaxBatch         = 1000
	DefaultMaxBodyBytes     = 4 << 20
	DefaultMaxInflightBody  = 64 << 20
	DefaultMaxSubscriptions = 100
	DefaultSendQueue        = 65536
	DefaultWriteTimeout     = 10 * time.Second
	DefaultActivityTimeout  = 120 * time.Second

	DefaultRoomsEditorCap    = 100
	DefaultRoomsRing         = 1000
	DefaultRoomsPresenceBeat = 50 * time.Millisecond
	DefaultRoomsRateLimit    = 60
	DefaultRoomsSendQueue    = 4096
)

func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.AppID == "" {
		c.AppID = DefaultAppID
	}
	if c.Key == "" {
		c.Key = DefaultKey
	}
	if c.Secret == "" {
		c.Secret = DefaultSecret
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if c.MaxBatch == 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxInflightBodyBytes == 0 {
		c.MaxInflightBodyBytes = max(DefaultMaxInflightBody, 2*c.MaxBodyBytes)
	}
	if c.MaxSubscriptions == 0 {
		c.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if c.SendQueue == 0 {
		c.SendQueue = DefaultSendQueue
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ActivityTimeout == 0 {
		c.ActivityTimeout = DefaultActivityTimeout
	}
	if c.RoomsEditorCap == 0 {
		c.RoomsEditorCap = DefaultRoomsEditorCap
	}
	if c.RoomsRing == 0 {
		c.RoomsRing = DefaultRoomsRing
	}
	if c.RoomsPresenceBeat == 0 {
		c.RoomsPresenceBeat = DefaultRoomsPresenceBeat
	}
	if c.RoomsRateLimit == 0 {
		c.RoomsRateLimit = DefaultRoomsRateLimit
	}
	if c.RoomsSendQueue == 0 {
		c.RoomsSendQueue = max(DefaultRoomsSendQueue, c.RoomsRing+1)
	}
	return c
}

// validate names the first field that cannot work.
func (c Config) validate() error {
	var errs []error
	if c.ClusterDelay < 0 || (c.ClusterDelay > 0 && c.Cluster == "") {
		errs = append(errs, fmt.Errorf("ClusterDelay: %v needs a Cluster and must not be negative", c.ClusterDelay))
	}
	if c.Cluster != "" {
		if err := CheckClusterURL(c.Cluster); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxMessageBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxMessageBytes: %d is negative", c.MaxMessageBytes))
	}
	if c.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("MaxBatch: %d is negative", c.MaxBatch))
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxBodyBytes: %d is negative", c.MaxBodyBytes))
	}
	if c.MaxInflightBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxInflightBodyBytes: %d is negative", c.MaxInflightBodyBytes))
	}
	if c.MaxSubscriptions < 0 {
		errs = append(errs, fmt.Errorf("MaxSubscriptions: %d is negative", c.MaxSubscriptions))
	}
	if c.SendQueue < 0 {
		errs = append(errs, fmt.Errorf("SendQueue: %d is negative", c.SendQueue))
	}
	if c.WriteTimeout < 0 {
		errs = append(errs, fmt.Errorf("WriteTimeout: %s is negative", c.WriteTimeout))
	}
	if c.Spin < 0 {
		errs = append(errs, fmt.Errorf("Spin: %s is negative", c.Spin))
	}
	if c.Garbage < 0 {
		errs = append(errs, fmt.Errorf("Garbage: %d is negative", c.Garbage))
	}
	if c.ConnBallast < 0 {
		errs = append(errs, fmt.Errorf("ConnBallast: %d is negative", c.ConnBallast))
	}
	if c.ActivityTimeout < 0 || (c.ActivityTimeout > 0 && c.ActivityTimeout < time.Second) {
		errs = append(errs, fmt.Errorf("ActivityTimeout: %s must be at least 1s", c.ActivityTimeout))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"RoomsEditorCap", c.RoomsEditorCap}, {"RoomsRing", c.RoomsRing}, {"RoomsSkipEvery", c.RoomsSkipEvery},
		{"RoomsRateLimit", c.RoomsRateLimit}, {"RoomsSendQueue", c.RoomsSendQueue}} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s: %d is negative", f.name, f.v))
		}
	}
	if c.RoomsPresenceBeat < 0 {
		errs = append(errs, fmt.Errorf("RoomsPresenceBeat: %s is negative", c.RoomsPresenceBeat))
	}
	if errs == nil {
		// A whole batch is queued at once: a queue shorter than the
		// largest batch would close every subscriber of it.
		d := c.withDefaults()
		if d.SendQueue < d.MaxBatch {
			errs = append(errs, fmt.Errorf("SendQueue: %d is less than MaxBatch %d; a full batch could never be queued", d.SendQueue, d.MaxBatch))
		}
		if d.MaxInflightBodyBytes < 2*d.MaxBodyBytes {
			errs = append(errs, fmt.Errorf("MaxInflightBodyBytes: %d is less than twice MaxBodyBytes %d; a body of unannounced length could never be read", d.MaxInflightBodyBytes, d.MaxBodyBytes))
		}
		// A resume queues joined and up to a whole ring at once.
		if d.RoomsSendQueue <= d.RoomsRing {
			errs = append(errs, fmt.Errorf("RoomsSendQueue: %d is not more than RoomsRing %d; a full resume could never be queued", d.RoomsSendQueue, d.RoomsRing))
		}
	}
	return errors.Join(errs...)
}

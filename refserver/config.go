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

	// MaxMessageBytes is the largest WebSocket message accepted; a larger
	// one closes that socket with 1009 (default 1 MiB).
	MaxMessageBytes int64

	// MaxBatch is the most events one batch_events request may carry
	// (default 1000, so a harness batch ladder up to 1000 works; real
	// Pusher caps it at 10).
	MaxBatch int

	// MaxBodyBytes caps a REST request body; larger gets 413 (default 64 MiB).
	MaxBodyBytes int64

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
}

// Defaults.
const (
	DefaultAddr            = "127.0.0.1:6001"
	DefaultAppID           = "app-id"
	DefaultKey             = "app-key"
	DefaultSecret          = "app-secret"
	DefaultMaxMessageBytes = 1 << 20
	DefaultMaxBatch        = 1000
	DefaultMaxBodyBytes    = 64 << 20
	DefaultSendQueue       = 65536
	DefaultWriteTimeout    = 10 * time.Second
	DefaultActivityTimeout = 120 * time.Second
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
	if c.SendQueue == 0 {
		c.SendQueue = DefaultSendQueue
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ActivityTimeout == 0 {
		c.ActivityTimeout = DefaultActivityTimeout
	}
	return c
}

// validate names the first field that cannot work.
func (c Config) validate() error {
	var errs []error
	if c.MaxMessageBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxMessageBytes: %d is negative", c.MaxMessageBytes))
	}
	if c.MaxBatch < 0 {
		errs = append(errs, fmt.Errorf("MaxBatch: %d is negative", c.MaxBatch))
	}
	if c.MaxBodyBytes < 0 {
		errs = append(errs, fmt.Errorf("MaxBodyBytes: %d is negative", c.MaxBodyBytes))
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
	if c.ActivityTimeout < 0 || (c.ActivityTimeout > 0 && c.ActivityTimeout < time.Second) {
		errs = append(errs, fmt.Errorf("ActivityTimeout: %s must be at least 1s", c.ActivityTimeout))
	}
	if errs == nil {
		// A whole batch is queued at once: a queue shorter than the
		// largest batch would close every subscriber of it.
		d := c.withDefaults()
		if d.SendQueue < d.MaxBatch {
			errs = append(errs, fmt.Errorf("SendQueue: %d is less than MaxBatch %d; a full batch could never be queued", d.SendQueue, d.MaxBatch))
		}
	}
	return errors.Join(errs...)
}

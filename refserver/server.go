package refserver

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/ceiling-bench/ceiling/pusher"
	"github.com/gorilla/websocket"
)

// Close codes the server sends.
const (
	closeOverCapacity  = 4100 // pusher.CodeOverCapacity: slow consumer
	closeServiceReboot = websocket.CloseServiceRestart
)

// ErrServerClosed is returned by Serve after Shutdown.
var ErrServerClosed = http.ErrServerClosed

// closer is a live WebSocket the server can close on Shutdown.
type closer interface {
	closeWith(code int, reason string)
}

// Server is the reference server. Create it with New; it is safe for
// concurrent use.
type Server struct {
	cfg          Config
	echoUpgrader websocket.Upgrader
	appUpgrader  websocket.Upgrader
	hub          *hub
	rooms        *roomHub
	cluster      *nats.Conn // Config.Cluster's connection; nil alone
	bodies       byteBudget // REST bodies in flight
	stats        counters
	started      time.Time
	// now is the rooms rate limit's clock: time.Now, a test's own clock
	// set before Serve.
	now func() time.Time

	pong []byte // pusher:pong frame, built once and shared

	idPrefix uint32
	nextID   atomic.Uint64

	mu       sync.Mutex
	live     map[closer][]byte // each socket, and its ballast (Config.ConnBallast)
	closed   bool
	handlers sync.WaitGroup // one per WebSocket handler goroutine
	http     []*http.Server
}

// New checks cfg, fills in defaults and returns a server that is not yet
// listening.
func New(cfg Config) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("refserver config: %w", err)
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:      cfg,
		hub:      newHub(),
		started:  time.Now(),
		now:      time.Now,
		idPrefix: rand.Uint32() >> 1,
		live:     make(map[closer][]byte),
	}
	s.rooms = newRoomHub(&s.cfg)
	if cfg.Cluster != "" {
		if err := s.joinCluster(); err != nil {
			return nil, fmt.Errorf("refserver: %w", err)
		}
	}
	s.bodies.limit = cfg.MaxInflightBodyBytes
	s.pong = sealFrame(pusher.AppendPong(frameBuf(48)), opText)
	// Buffer sizes 0 make gorilla reuse the 4 KiB reader and writer that
	// net/http hijacks to us: no buffer allocated per socket or message.
	s.echoUpgrader = websocket.Upgrader{
		// A benchmark target accepts any origin.
		CheckOrigin: func(*http.Request) bool { return true },
	}
	// Pusher sockets never use gorilla's writer (their own writer sends
	// pre-built frames), so an empty pool means no write buffer at all.
	s.appUpgrader = websocket.Upgrader{
		WriteBufferPool: &sync.Pool{},
		CheckOrigin:     func(*http.Request) bool { return true },
	}
	return s, nil
}

// Config returns the configuration in effect, defaults filled in.
func (s *Server) Config() Config { return s.cfg }

// Handler serves every endpoint: /echo, /app/{key}, /rooms, the REST API
// under /apps/{id}/, /health and /metrics.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /echo", s.serveEcho)
	mux.HandleFunc("GET /app/{key}", s.serveApp)
	mux.HandleFunc("POST /apps/{id}/events", s.serveEvents)
	mux.HandleFunc("POST /apps/{id}/batch_events", s.serveBatchEvents)
	mux.HandleFunc("GET /rooms", s.serveRooms)
	mux.HandleFunc("GET /health", s.serveHealth)
	mux.HandleFunc("GET /metrics", s.serveMetrics)
	return mux
}

// ListenAndServe listens on Config.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Shutdown, which makes it return
// ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.http = append(s.http, hs)
	s.mu.Unlock()
	return hs.Serve(l)
}

// Shutdown stops accepting, waits for REST requests in flight, then closes
// every WebSocket with 1012 (service restart) and waits until each has
// finished its close handshake (at most a few closeGrace periods) or ctx
// ends, in which case the remaining sockets are cut and ctx's error is
// returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	servers := s.http
	s.mu.Unlock()

	var errs []error
	for _, hs := range servers {
		// Hijacked (WebSocket) connections are not waited for here.
		if err := hs.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if s.cluster != nil {
		// After the REST requests in flight: every event this node
		// answered 200 for has been relayed (Close flushes it out).
		s.cluster.Close()
	}

	s.mu.Lock()
	live := make([]closer, 0, len(s.live))
	for c := range s.live {
		live = append(live, c)
	}
	s.mu.Unlock()
	for _, c := range live {
		c.closeWith(closeServiceReboot, "server shutting down")
	}

	done := make(chan struct{})
	go func() { s.handlers.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.live {
			if nc, ok := c.(interface{ netConn() net.Conn }); ok {
				nc.netConn().Close()
			}
		}
		s.mu.Unlock()
		errs = append(errs, fmt.Errorf("closing WebSockets: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}

// track registers a live socket; it returns false once Shutdown began, so
// the handler closes the socket at once.
func (s *Server) track(c closer) bool {
	ballast := newBallast(s.cfg.ConnBallast)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.live[c] = ballast
	s.handlers.Add(1)
	s.stats.connectionsTotal.Add(1)
	s.stats.connections.Add(1)
	return true
}

func (s *Server) untrack(c closer) {
	s.mu.Lock()
	delete(s.live, c)
	s.mu.Unlock()
	s.stats.connections.Add(-1)
	s.handlers.Done()
}

// newSocketID returns a Pusher socket id: two integers joined by a dot,
// unique within this process.
func (s *Server) newSocketID() string {
	return strconv.FormatUint(uint64(s.idPrefix), 10) + "." + strconv.FormatUint(s.nextID.Add(1), 10)
}

// newBallast is n bytes a socket keeps while it lives (Config.ConnBallast),
// every byte written, so that every page is resident (a fresh allocation
// the runtime took zeroed from the OS would not be): nil for none.
func newBallast(n int64) []byte {
	if n <= 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i) | 1
	}
	return b
}

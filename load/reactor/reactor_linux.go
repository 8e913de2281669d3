package reactor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"golang.org/x/sys/unix"
)

// Supported reports whether this build has the reactor (Linux only).
const Supported = true

// maxWaitMs bounds one epoll_wait, so the loop re-checks the drain
// deadline even if no event comes (cancellation has its eventfd).
const maxWaitMs = 100

// Reactor owns connections and drives them from one goroutine (Run).
type Reactor struct {
	cfg       Config
	rec       Recorder
	frameSize int // wire bytes of one reply
	epfd      int
	file      *os.File // epfd in Go's netpoller, once Run made it so
	efd       int      // eventfd: written when Run's ctx is cancelled
	conns     []*conn
	active    int // connections still sending or awaiting replies
	closed    bool

	reads, messages atomic.Int64 // read by the engine's observer mid-run
}

// New makes a reactor with its epoll and eventfd; Close (or Run) releases
// them.
func New(cfg Config, rec Recorder) (*Reactor, error) {
	if cfg.Batch < 1 || cfg.Pool == nil || cfg.Now == nil || rec == nil {
		return nil, errors.New("reactor: Config needs Batch >= 1, Pool, Now and a Recorder")
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("reactor: epoll_create1: %w", err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("reactor: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: -1}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("reactor: epoll_ctl eventfd: %w", err)
	}
	return &Reactor{cfg: cfg, rec: rec, epfd: epfd, efd: efd, frameSize: wsconn.ServerFrameSize(cfg.RecordSize)}, nil
}

// Add takes c's socket out of Go's netpoller and into this reactor;
// next is the connection's first position in the payload pool. After Add,
// c is only used for its mask PRNG (AppendFrame). Call before Run.
func (r *Reactor) Add(c *wsconn.Conn, next int) error {
	fd, buffered, err := c.Detach()
	if err != nil {
		return err
	}
	cn := newConn(c, fd, int32(len(r.conns)), r.cfg, next)
	if len(buffered) > len(cn.rbuf) {
		cn.rbuf = make([]byte, len(buffered))
	}
	cn.w = copy(cn.rbuf, buffered) // frames that came with the 101
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: cn.idx}
	if err := unix.EpollCtl(r.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		unix.Close(fd)
		return fmt.Errorf("reactor: epoll_ctl add: %w", err)
	}
	r.conns = append(r.conns, cn)
	r.active++
	return nil
}

// Counters returns the read syscalls made and data messages parsed so
// far. Safe from any goroutine.
func (r *Reactor) Counters() (reads, messages int64) {
	return r.reads.Load(), r.messages.Load()
}

// Run drives every connection until none is sending or awaiting replies,
// the drain deadline passes (connections still waiting then Fail with a
// timeout) or ctx is cancelled (nothing more is reported). It then sends
// each connection that is still sound a close frame (best effort) and
// closes everything. Run once.
func (r *Reactor) Run(ctx context.Context) {
	defer r.Close()
	stop := context.AfterFunc(ctx, func() {
		var one = [8]byte{1}
		_, _ = unix.Write(r.efd, one[:])
	})
	defer stop()

	for _, c := range r.conns {
		if ctx.Err() != nil {
			return
		}
		r.send(c)
		if !c.done && c.r < c.w {
			r.parse(c, r.cfg.Now())
		}
	}
	events := make([]unix.EpollEvent, max(16, min(len(r.conns), 256)))
	wait := r.waiter(events)
	for r.active > 0 {
		if r.cfg.Now() >= r.cfg.Window.Drain {
			r.expire()
			return
		}
		n, err := wait()
		if err != nil {
			if err == unix.EINTR || errors.Is(err, os.ErrDeadlineExceeded) {
				continue // the drain check above decides
			}
			r.failAll(fmt.Errorf("reactor: epoll_wait: %w", err))
			return
		}
		if n == 0 {
			continue
		}
		now := r.cfg.Now()
		for i := range events[:n] {
			ev := &events[i]
			if ev.Fd < 0 {
				return // ctx cancelled
			}
			c := r.conns[ev.Fd]
			if c.done {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				r.flush(c)
			}
			if !c.done && ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
				r.read(c, now)
			}
		}
	}
}

// waiter returns the loop's wait for events. It first asks epoll what is
// ready now with a raw zero-timeout epoll_wait (a busy generator nearly
// always finds connections ready). When nothing is, the reactor parks in
// Go's netpoller on its epoll descriptor (itself pollable) until that has
// events or the drain deadline passes: one park per idle wait of the
// whole reactor, never one per connection, and the P stays free for the
// process's other goroutines. Where the descriptor cannot join the
// netpoller it falls back to a blocking unix.EpollWait.
func (r *Reactor) waiter(events []unix.EpollEvent) func() (int, error) {
	var n int
	var err error
	poll := func(uintptr) bool {
		n, err = epollWait(r.epfd, events, 0)
		return err != nil || n > 0
	}
	if r.file == nil && unix.SetNonblock(r.epfd, true) == nil {
		r.file = os.NewFile(uintptr(r.epfd), "reactor-epoll") // owns epfd from now on
	}
	if r.file != nil {
		drain := time.Now().Add(time.Duration(r.cfg.Window.Drain - r.cfg.Now()))
		if r.file.SetReadDeadline(drain) == nil {
			if rc, e := r.file.SyscallConn(); e == nil {
				return func() (int, error) {
					if e := rc.Read(poll); e != nil {
						return 0, e
					}
					return n, err
				}
			}
		}
	}
	return func() (int, error) {
		if poll(0) {
			return n, err
		}
		wait := min((r.cfg.Window.Drain-r.cfg.Now()+999_999)/1_000_000, maxWaitMs)
		return unix.EpollWait(r.epfd, events, int(max(wait, 0)))
	}
}

// Close closes every descriptor, sending a close frame first on each
// connection still sound. Run calls it; call it only when Run never ran.
func (r *Reactor) Close() {
	if r.closed {
		return
	}
	r.closed = true
	for _, c := range r.conns {
		if !c.failed {
			c.wbuf = c.ws.AppendFrame(c.wbuf[:0], wsconn.OpClose, []byte{byte(wsconn.CloseNormalClosure >> 8), byte(wsconn.CloseNormalClosure & 0xff)})
			_, _ = unix.Write(c.fd, c.wbuf) // best effort, never blocks
		}
		unix.Close(c.fd)
	}
	unix.Close(r.efd)
	if r.file != nil {
		r.file.Close()
	} else {
		unix.Close(r.epfd)
	}
}

// finish takes a connection out of the loop: it has nothing more to send
// or await (or failed).
func (r *Reactor) finish(c *conn) {
	if c.done {
		return
	}
	c.done = true
	r.active--
	_ = unix.EpollCtl(r.epfd, unix.EPOLL_CTL_DEL, c.fd, nil)
}

func (r *Reactor) fail(c *conn, err error) {
	if c.done {
		return
	}
	c.failed = true
	r.finish(c)
	r.rec.Fail(err)
}

// expire gives up on every connection still waiting at the drain.
func (r *Reactor) expire() {
	r.failAll(errNoReplyByDrain)
}

func (r *Reactor) failAll(err error) {
	for _, c := range r.conns {
		r.fail(c, err)
	}
}

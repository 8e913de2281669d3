package evloop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/ceiling-bench/ceiling/load/wsconn"
	"golang.org/x/sys/unix"
)

// Supported reports whether this build has the engine (Linux only).
const Supported = true

// readBufferSize is each loop's shared read buffer: many messages per
// read syscall. Frames larger than it are read into a buffer of their own.
const readBufferSize = 256 << 10

// maxMessageSize bounds one received message (a frame, or a fragmented
// message's frames together), as wsconn's default does.
const maxMessageSize = wsconn.DefaultMaxMessageSize

// minTimerSleep bounds how often a loop's timerfd wakes it: timers due
// sooner than this after the loop last armed it run together at the next
// wake-up, at most this late, so a high rate costs at most
// 1/minTimerSleep timer wake-ups per second per loop. It is the open
// loop's pacing clock's rule (load/clockwork.go): measured on a busy
// machine at 20,000 ops/s over 16 connections, a wake-up per timer left
// 56% of sends late by more than an interval.
const minTimerSleep = 200_000 // ns

// maxWaitMs bounds one blocking epoll_wait where the epoll descriptor
// cannot be parked in Go's netpoller (the fallback), so the loop re-checks
// the drain and its timers.
const maxWaitMs = 100

// Epoll event data for a loop's own descriptors; connections use their
// slot (>= 0).
const (
	dataCancel = -1 // eventfd: Run's context was cancelled
	dataTimer  = -2 // timerfd: the earliest timer came due
)

// Engine is a group of event loops.
type Engine struct {
	cfg    Config
	loops  []*loop
	n      int // connections added
	ran    atomic.Bool
	runEnd int64
}

// loop is one event loop: its epoll set, its connections, their timers and
// its shared buffers. Only its goroutine touches it during Run, except the
// atomic counters.
type loop struct {
	cfg   *Config
	idx   int
	epfd  int
	efd   int // eventfd, written when Run's context is cancelled
	tfd   int // timerfd, armed for the earliest timer
	file  *os.File
	conns []*Conn // by slot
	// active counts connections not yet ended.
	active int
	heap   timers
	armed  int64 // the due time the timerfd is armed for; 0 when disarmed or fired

	rbuf    []byte // shared read buffer
	wbuf    []byte // Send's framing buffer
	scratch []byte // Conn.Scratch
	free    freeLists
	events  []unix.EpollEvent

	lag      *hdrhistogram.Histogram // windowed
	winWait  int64                   // blocked time inside the window
	exitedAt int64

	reads, messages, timerRuns, waitNs atomic.Int64
}

// New makes an engine of cfg.Loops loops, each with its epoll set, its
// eventfd and its timerfd. Run releases them (call Run even when nothing
// was added, with a cancelled context if need be).
func New(cfg Config) (*Engine, error) {
	if cfg.Now == nil {
		return nil, errors.New("evloop: Config.Now is required")
	}
	if cfg.Loops <= 0 {
		cfg.Loops = runtime.GOMAXPROCS(0)
	}
	e := &Engine{cfg: cfg}
	for i := range cfg.Loops {
		l, err := newLoop(&e.cfg, i)
		if err != nil {
			for _, l := range e.loops {
				l.close()
			}
			return nil, err
		}
		e.loops = append(e.loops, l)
	}
	return e, nil
}

func newLoop(cfg *Config, idx int) (*loop, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("evloop: epoll_create1: %w", err)
	}
	l := &loop{cfg: cfg, idx: idx, epfd: epfd, efd: -1, tfd: -1}
	if l.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		l.close()
		return nil, fmt.Errorf("evloop: eventfd: %w", err)
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		l.close()
		return nil, fmt.Errorf("evloop: timerfd_create: %w", err)
	}
	for _, fd := range [][2]int{{l.efd, dataCancel}, {l.tfd, dataTimer}} {
		ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd[1])}
		if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, fd[0], &ev); err != nil {
			l.close()
			return nil, fmt.Errorf("evloop: epoll_ctl: %w", err)
		}
	}
	l.rbuf = make([]byte, readBufferSize)
	l.wbuf = make([]byte, 0, 4<<10)
	l.scratch = make([]byte, 0, 64<<10)
	l.lag = newLagHistogram()
	return l, nil
}

// Add takes ws's socket out of Go's netpoller (wsconn.Conn.Detach) and
// gives it to the next loop, round-robin; h handles it from then on.
// After Add, ws is used only for its mask PRNG (Conn.AppendFrame). Call
// before Run, from one goroutine.
func (e *Engine) Add(ws *wsconn.Conn, h Handler) (*Conn, error) {
	if e.ran.Load() {
		return nil, errors.New("evloop: Add after Run")
	}
	if h == nil {
		return nil, errors.New("evloop: Add needs a Handler")
	}
	fd, buffered, err := ws.Detach()
	if err != nil {
		return nil, err
	}
	l := e.loops[e.n%len(e.loops)]
	c := &Conn{l: l, h: h, ws: ws, fd: int32(fd), idx: int32(e.n), slot: int32(len(l.conns)), hidx: -1}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: c.slot}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		closeFd(fd)
		return nil, fmt.Errorf("evloop: epoll_ctl add: %w", err)
	}
	if len(buffered) > 0 { // frames that came with the 101, parsed first
		c.pend = append(l.free.get(len(buffered)), buffered...)
	}
	l.conns = append(l.conns, c)
	l.active++
	e.n++
	return c, nil
}

// Run drives every loop on a goroutine of its own until every connection
// has ended, the drain deadline passes or ctx is cancelled, then closes
// everything. Every connection's Closed has been called when it returns.
// Run once.
func (e *Engine) Run(ctx context.Context) {
	if e.ran.Swap(true) {
		return
	}
	var wg sync.WaitGroup
	for _, l := range e.loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.run(ctx)
		}()
	}
	wg.Wait()
	e.runEnd = e.cfg.Now()
}

// Counters returns the read syscalls made and data messages handled so
// far, over every loop. Safe from any goroutine.
func (e *Engine) Counters() (reads, messages int64) {
	for _, l := range e.loops {
		reads += l.reads.Load()
		messages += l.messages.Load()
	}
	return reads, messages
}

// Snapshot returns every loop's cumulative counters. Safe from any
// goroutine.
func (e *Engine) Snapshot() []LoopCounters {
	s := make([]LoopCounters, len(e.loops))
	for i, l := range e.loops {
		s[i] = LoopCounters{Reads: l.reads.Load(), Messages: l.messages.Load(), Timers: l.timerRuns.Load(), WaitNs: l.waitNs.Load()}
	}
	return s
}

// Stats returns the loops' busy fractions and lag over the window. Call
// after Run.
func (e *Engine) Stats() Stats {
	w := e.cfg.Window
	end := min(w.End, e.runEnd)
	s := Stats{Lag: newLagHistogram(), WindowNs: max(0, end-w.Start)}
	for _, l := range e.loops {
		s.Lag.Merge(l.lag)
		busy := 0.0
		if s.WindowNs > 0 {
			// A loop whose connections all ended waits from then on.
			blocked := l.winWait + overlap(l.exitedAt, end, w.Start, end)
			busy = min(1, max(0, 1-float64(blocked)/float64(s.WindowNs)))
		}
		s.Busy = append(s.Busy, busy)
	}
	return s
}

// overlap is the length of [a, b) ∩ [s, e).
func overlap(a, b, s, e int64) int64 {
	return max(0, min(b, e)-max(a, s))
}

func (l *loop) now() int64 { return l.cfg.Now() }

// run is the loop: due timers, then I/O events, until every connection
// has ended, the drain or cancellation.
func (l *loop) run(ctx context.Context) {
	defer l.close()
	if l.active == 0 {
		l.exitedAt = l.now()
		return
	}
	stop := context.AfterFunc(ctx, func() {
		one := [8]byte{1}
		_, _ = unix.Write(l.efd, one[:])
	})
	defer stop()
	defer func() { l.exitedAt = l.now() }()
	if ctx.Err() != nil {
		l.endAll(ctx.Err())
		return
	}
	for _, c := range l.conns {
		if !c.done && len(c.pend) > 0 {
			l.parseBuffered(c)
		}
	}
	l.events = make([]unix.EpollEvent, max(16, min(len(l.conns)+2, 256)))
	wait := l.waiter()
	for l.active > 0 {
		now := l.now()
		if l.cfg.Drain > 0 && now >= l.cfg.Drain {
			l.endAll(ErrDrain)
			return
		}
		l.runTimers(now)
		if l.active == 0 {
			return
		}
		l.arm()
		n, ready, err := wait()
		if err != nil {
			if err == unix.EINTR || errors.Is(err, os.ErrDeadlineExceeded) {
				continue // the drain check above decides
			}
			l.endAll(fmt.Errorf("evloop: epoll_wait: %w", err))
			return
		}
		first := true // handled at ready: nothing ran since
		for i := range l.events[:n] {
			ev := &l.events[i]
			switch ev.Fd {
			case dataCancel:
				l.endAll(ctx.Err())
				return
			case dataTimer:
				var b [8]byte
				_, _ = rawRead(l.tfd, b[:])
				l.armed = 0
				continue
			}
			c := l.conns[ev.Fd]
			if c.done {
				continue
			}
			if ev.Events&unix.EPOLLOUT != 0 {
				l.flush(c)
			}
			if !c.done && ev.Events&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
				t := ready
				if !first {
					t = l.now()
				}
				first = false
				l.recordLag(t, t-ready)
				l.read(c)
			}
		}
	}
}

// recordLag records a ready -> handled lag handled at t, inside the
// window only.
func (l *loop) recordLag(t, lag int64) {
	if t < l.cfg.Window.Start || t >= l.cfg.Window.End {
		return
	}
	_ = l.lag.RecordValue(min(max(lag, lagMin), lagMax))
}

// runTimers runs every timer due at now, earliest first. A timer a
// handler sets again at or before now runs again, but the loop stops
// after as many timers as were in the heap so reads are not starved.
func (l *loop) runTimers(now int64) {
	var ran int64
	for budget := len(l.heap); budget > 0 && len(l.heap) > 0; budget-- {
		c := l.heap[0]
		if c.at > now {
			break
		}
		due := c.at
		l.heap.remove(c)
		c.at = 0
		t := l.now()
		l.recordLag(t, t-due)
		ran++
		c.h.Timer(c, due, t)
	}
	if ran > 0 {
		l.timerRuns.Add(ran)
	}
}

// arm makes the timerfd fire for the earliest timer: one timerfd_settime
// when the earliest timer changed for an earlier one or the armed one
// fired, so the wait wakes at the microsecond a timer is due instead of
// the millisecond Go's timers would (see load/clockwork.go).
//
// The timerfd is relative, so it is armed from a fresh reading of the
// clock: the pass's own handlers may have run a while since it began.
func (l *loop) arm() {
	if len(l.heap) == 0 {
		return // a stale arming only wakes the loop once for nothing
	}
	head := l.heap[0].at
	if l.armed != 0 && l.armed <= head {
		return
	}
	d := head - l.now()
	switch {
	case d <= 0:
		d = 1 // due already: the next wait must not block
	case d < minTimerSleep:
		d = minTimerSleep
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
	if timerfdSettime(l.tfd, &spec) == nil {
		l.armed = head
	}
}

// waiter returns the loop's wait for events, which returns them with the
// time it did (the events' ready time). It first asks epoll what is
// ready now with a raw zero-timeout epoll_wait (a busy loop nearly always
// finds connections ready). When nothing is, the loop parks in Go's
// netpoller on its epoll descriptor (itself pollable) until that has
// events (a socket, the timerfd, the cancel eventfd) or the drain
// deadline passes: one park per idle wait of the whole loop, never one per
// connection, and the P stays free for the process's other goroutines.
// Where the descriptor cannot join the netpoller it falls back to a
// blocking unix.EpollWait bounded by the next timer and maxWaitMs.
//
// The clock is read once per wait that found events at once, and twice
// (before and after) per wait that parked: a loop makes one pass per
// batch at small batches, so each reading is a share of every message.
func (l *loop) waiter() func() (int, int64, error) {
	if l.cfg.BusyPoll {
		return func() (int, int64, error) {
			for {
				n, err := epollWait(l.epfd, l.events, 0)
				t := l.now()
				if err != nil || n > 0 || (l.cfg.Drain > 0 && t >= l.cfg.Drain) {
					return n, t, err
				}
			}
		}
	}
	var n, polls int
	var err error
	var t0 int64 // when the first poll found nothing
	poll := func(uintptr) bool {
		polls++
		n, err = epollWait(l.epfd, l.events, 0)
		ok := err != nil || n > 0
		if !ok && polls == 1 {
			t0 = l.now()
		}
		return ok
	}
	if l.file == nil && unix.SetNonblock(l.epfd, true) == nil {
		l.file = os.NewFile(uintptr(l.epfd), "evloop-epoll") // owns epfd from now on
	}
	if l.file != nil {
		var drain time.Time // none
		if l.cfg.Drain > 0 {
			drain = time.Now().Add(time.Duration(l.cfg.Drain - l.now()))
		}
		if l.file.SetReadDeadline(drain) == nil {
			if rc, e := l.file.SyscallConn(); e == nil {
				return func() (int, int64, error) {
					// rc.Read polls first and parks only when nothing
					// is ready: a wait that polled more than once, or
					// ended at the deadline, parked.
					polls = 0
					e := rc.Read(poll)
					t := l.now()
					if polls != 1 || e != nil {
						if polls == 0 { // the deadline had passed: no poll, no park
							t0 = t
						}
						l.blocked(t0, t)
					}
					if e != nil {
						return 0, t, e
					}
					return n, t, err
				}
			}
		}
	}
	return func() (int, int64, error) {
		if poll(0) {
			return n, l.now(), err
		}
		now := l.now()
		until := now + maxWaitMs*1_000_000
		if l.cfg.Drain > 0 {
			until = min(until, l.cfg.Drain)
		}
		if len(l.heap) > 0 {
			until = min(until, l.heap[0].at)
		}
		ms := min(max((until-now+999_999)/1_000_000, 0), maxWaitMs)
		n, err := unix.EpollWait(l.epfd, l.events, int(ms))
		t := l.now()
		l.blocked(now, t)
		return n, t, err
	}
}

// blocked accounts a wait from t0 to t1.
func (l *loop) blocked(t0, t1 int64) {
	l.waitNs.Add(t1 - t0)
	l.winWait += overlap(t0, t1, l.cfg.Window.Start, l.cfg.Window.End)
}

// endAll ends every connection still open with err.
func (l *loop) endAll(err error) {
	for _, c := range l.conns {
		if !c.done {
			c.sendClose(wsconn.CloseNormalClosure)
			l.end(c, err)
		}
	}
}

// close releases the loop's descriptors (connections close as they end).
func (l *loop) close() {
	for _, c := range l.conns {
		if !c.done { // Run never ran its loop
			c.done = true
			closeFd(int(c.fd))
		}
	}
	if l.efd >= 0 {
		closeFd(l.efd)
	}
	if l.tfd >= 0 {
		closeFd(l.tfd)
	}
	if l.file != nil {
		l.file.Close()
	} else {
		closeFd(l.epfd)
	}
}

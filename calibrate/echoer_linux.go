//go:build linux

package calibrate

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported is whether this system has the raw-syscall echoer (Linux).
const Supported = true

// Echoer answers every Unit bytes it reads on a socket with Reply, on one
// epoll loop of raw read(2) and write(2): it never parses a frame and
// keeps one counter per connection. It is both sides of the cheapest echo
// there is: the null sink (Unit one client frame, Reply one unmasked
// server frame of the same size) and `make bench`'s syscall-only floor
// generator (Unit one batch of replies, Reply the next pre-framed masked
// batch).
type Echoer struct {
	unit    int
	reply   []byte // Copies replies back to back
	replyN  int    // bytes of one reply
	lowat   bool
	ep      int
	epf     *os.File // ep, pollable: Run parks in Go's netpoller on it
	buf     []byte
	mu      sync.Mutex
	pending []int // by fd: bytes read toward the next unit; -1 not ours
	closed  atomic.Bool

	units atomic.Int64
	reads atomic.Int64
	errs  atomic.Int64
	first atomic.Value // string: the first error
}

// maxLowWater caps SO_RCVLOWAT (EchoerConfig.LowWater).
const maxLowWater = 64 << 10

// EchoerConfig configures an Echoer.
type EchoerConfig struct {
	Unit  int    // bytes that call for one reply
	Reply []byte // one reply
	// Copies is how many replies one write(2) may carry when several
	// units arrived in one read (default 256).
	Copies int
	// LowWater sets SO_RCVLOWAT to Unit (at most 64 KiB) on each socket,
	// so epoll wakes once a whole unit is there (a read per batch, like
	// wsconn.ExpectBytes).
	LowWater bool
}

// NewEchoer makes an echoer with its epoll instance.
func NewEchoer(cfg EchoerConfig) (*Echoer, error) {
	if cfg.Unit < 1 || len(cfg.Reply) == 0 {
		return nil, errors.New("calibrate: echoer needs a unit and a reply")
	}
	if cfg.Copies < 1 {
		cfg.Copies = 256
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		return nil, err
	}
	e := &Echoer{unit: cfg.Unit, replyN: len(cfg.Reply), lowat: cfg.LowWater, ep: ep,
		epf: os.NewFile(uintptr(ep), "echoer-epoll"), buf: make([]byte, 256<<10)}
	for range cfg.Copies {
		e.reply = append(e.reply, cfg.Reply...)
	}
	return e, nil
}

// Add takes fd (a connected socket past its handshake, owned by the
// echoer from now on) with buffered bytes already read from it. With kick
// it writes one reply first (a generator's first batch).
func (e *Echoer) Add(fd int, buffered int, kick bool) error {
	if err := unix.SetNonblock(fd, true); err != nil {
		return err
	}
	if e.lowat {
		// Capped like wsconn.ExpectBytes: a low-water mark past what the
		// receive buffer holds could never be reached.
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVLOWAT, min(e.unit, maxLowWater)); err != nil {
			return fmt.Errorf("SO_RCVLOWAT: %w", err)
		}
	}
	e.mu.Lock()
	for len(e.pending) <= fd {
		e.pending = append(e.pending, -1)
	}
	e.pending[fd] = buffered
	e.mu.Unlock()
	if kick {
		if err := writeAll(fd, e.reply[:e.replyN]); err != nil {
			return err
		}
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLRDHUP, Fd: int32(fd)}
	return unix.EpollCtl(e.ep, unix.EPOLL_CTL_ADD, fd, &ev)
}

// Units is how many units were answered so far; Reads how many read(2)
// calls returned data. Any goroutine.
func (e *Echoer) Units() int64 { return e.units.Load() }

// Reads is the read(2) calls that returned data so far.
func (e *Echoer) Reads() int64 { return e.reads.Load() }

// Errors is the connections that ended with an error, and the first one.
func (e *Echoer) Errors() (int64, string) {
	s, _ := e.first.Load().(string)
	return e.errs.Load(), s
}

// Close ends Run, which closes every socket.
func (e *Echoer) Close() {
	e.closed.Store(true)
	_ = e.epf.Close()
}

// Run is the loop; it returns after Close. It waits the way the cheapest
// Go program can: a raw zero-timeout epoll_wait, and when nothing is
// ready a park in Go's netpoller on the (pollable) epoll descriptor, so a
// busy loop makes no blocking system call and an idle one costs the
// runtime no thread hand-off. Reads and writes are raw system calls too.
func (e *Echoer) Run() {
	events := make([]unix.EpollEvent, 256)
	rc, err := e.epf.SyscallConn()
	if err != nil {
		e.fail(err)
		return
	}
	var n int
	var werr error
	poll := func(uintptr) bool {
		n, werr = epollWait(e.ep, events)
		return werr != unix.EAGAIN && (werr != nil || n > 0)
	}
	defer func() {
		e.mu.Lock()
		for fd, p := range e.pending {
			if p >= 0 {
				unix.Close(fd)
			}
		}
		e.pending = nil
		e.mu.Unlock()
	}()
	for !e.closed.Load() {
		if err := rc.Read(poll); err != nil {
			if !e.closed.Load() {
				e.fail(fmt.Errorf("epoll: %w", err))
			}
			return
		}
		if werr != nil {
			if werr == unix.EINTR {
				continue
			}
			e.fail(fmt.Errorf("epoll_wait: %w", werr))
			return
		}
		for _, ev := range events[:n] {
			e.readable(int(ev.Fd))
		}
	}
}

// readable reads what fd has, once, and answers every whole unit.
func (e *Echoer) readable(fd int) {
	r, err := rawRead(fd, e.buf)
	switch {
	case err == unix.EAGAIN || err == unix.EINTR:
		return
	case err != nil || r == 0:
		e.drop(fd, err)
		return
	}
	e.reads.Add(1)
	e.mu.Lock()
	p := e.pending[fd] + r
	k := p / e.unit
	e.pending[fd] = p - k*e.unit
	e.mu.Unlock()
	if k == 0 {
		return
	}
	e.units.Add(int64(k))
	copies := len(e.reply) / e.replyN
	for k > 0 {
		m := min(k, copies)
		if err := writeAll(fd, e.reply[:m*e.replyN]); err != nil {
			e.drop(fd, err)
			return
		}
		k -= m
	}
}

func (e *Echoer) drop(fd int, err error) {
	_ = unix.EpollCtl(e.ep, unix.EPOLL_CTL_DEL, fd, nil)
	e.mu.Lock()
	e.pending[fd] = -1
	e.mu.Unlock()
	unix.Close(fd)
	if err != nil && !e.closed.Load() {
		e.fail(err)
	}
}

func (e *Echoer) fail(err error) {
	e.first.CompareAndSwap(nil, err.Error())
	e.errs.Add(1)
}

// writeAll writes b whole to the non-blocking fd, waiting in poll(2) while
// the socket refuses bytes.
func writeAll(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := rawWrite(fd, b)
		if err == unix.EAGAIN {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
			if _, err := unix.Poll(pfd, 1000); err != nil && err != unix.EINTR {
				return err
			}
			continue
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// Raw system calls: the sockets are non-blocking, so these never block,
// and skipping the runtime's entersyscall/exitsyscall is part of the floor.

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(n), errno(e)
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	return int(n), errno(e)
}

// epollWait is a zero-timeout epoll_wait.
func epollWait(ep int, events []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), 0, 0, 0)
	return int(n), errno(e)
}

// errno is e as an error without allocating: nil for 0, the unix.Errno
// value otherwise (comparable with ==).
func errno(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

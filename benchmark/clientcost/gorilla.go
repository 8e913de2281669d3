package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"
)

// The gorilla role: a third client, independent of ceiling and of Node,
// on github.com/gorilla/websocket. One goroutine per connection, closed
// loop: write -batch text messages, read -batch replies with ReadMessage
// (eager: each reply read as it comes), repeat until -run has passed.
// The variants change only how the bytes reach the socket:
//
//	batch        the batch's frames in one write (batchConn coalesces
//	             gorilla's one Write per message until Flush)
//	frame        one write per message (plain gorilla on a *net.TCPConn)
//	nodelay-off  batch, with TCP_NODELAY off (Nagle on)
//	quickack     batch, TCP_QUICKACK set after every read
//	smallbuf     batch, SO_RCVBUF and SO_SNDBUF 8 KiB, set before connect
//
// It exits 0 after a clean run; any dial, read, write or echo mismatch is
// an error: it prints one "errors N: first" line and exits 1.

// gorillaVariant is what a variant changes.
type gorillaVariant struct {
	coalesce, noDelayOff, quickAck, smallBuf bool
}

var gorillaVariants = map[string]gorillaVariant{
	"batch":       {coalesce: true},
	"frame":       {},
	"nodelay-off": {coalesce: true, noDelayOff: true},
	"quickack":    {coalesce: true, quickAck: true},
	"smallbuf":    {coalesce: true, smallBuf: true},
}

// smallBuf is the socket buffer size of the smallbuf variant (the kernel
// doubles what it is given).
const smallBuf = 8 << 10

// batchConn is the net.Conn gorilla writes to: while buffering it keeps
// what gorilla writes (one Write per message) until Flush writes it with
// one write; with quickAck it sets TCP_QUICKACK after every read, since
// gorilla reads through a bufio.Reader on this conn.
type batchConn struct {
	*net.TCPConn
	raw       syscall.RawConn
	buffering bool
	quickAck  bool
	buf       []byte
	ackErr    error
}

func (c *batchConn) Write(p []byte) (int, error) {
	if !c.buffering {
		return c.TCPConn.Write(p)
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

// Flush writes what was buffered in one write (the kernel may still take
// it in parts when the send buffer is short; Go's Write loops then).
func (c *batchConn) Flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.TCPConn.Write(c.buf)
	c.buf = c.buf[:0]
	return err
}

func (c *batchConn) Read(p []byte) (int, error) {
	n, err := c.TCPConn.Read(p)
	if c.quickAck && n > 0 && c.ackErr == nil {
		if cerr := c.raw.Control(func(fd uintptr) {
			c.ackErr = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
		}); cerr != nil && c.ackErr == nil {
			c.ackErr = cerr
		}
		if c.ackErr != nil {
			return n, fmt.Errorf("TCP_QUICKACK: %w", c.ackErr)
		}
	}
	return n, err
}

// dialGorilla opens one connection of variant v.
func dialGorilla(url string, v gorillaVariant) (*websocket.Conn, *batchConn, error) {
	var bc *batchConn
	nd := net.Dialer{Timeout: 10 * time.Second}
	if v.smallBuf {
		nd.Control = func(_, _ string, rc syscall.RawConn) error {
			var serr error
			err := rc.Control(func(fd uintptr) {
				serr = errors.Join(unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, smallBuf),
					unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, smallBuf))
			})
			return errors.Join(err, serr)
		}
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second, NetDial: func(network, addr string) (net.Conn, error) {
		nc, err := nd.Dial(network, addr)
		if err != nil {
			return nil, err
		}
		tcp := nc.(*net.TCPConn)
		if v.noDelayOff {
			if err := tcp.SetNoDelay(false); err != nil {
				tcp.Close()
				return nil, err
			}
		}
		if !v.coalesce && !v.quickAck {
			return tcp, nil
		}
		raw, err := tcp.SyscallConn()
		if err != nil {
			tcp.Close()
			return nil, err
		}
		bc = &batchConn{TCPConn: tcp, raw: raw, quickAck: v.quickAck}
		return bc, nil
	}}
	ws, _, err := d.Dial(url, nil)
	if err != nil {
		return nil, nil, err
	}
	if bc != nil {
		bc.buffering = v.coalesce // the handshake went straight through
	}
	return ws, bc, nil
}

// gorillaRole dials -conns connections, loads them until -run has
// passed, closes them, and reports errors.
func gorillaRole(o options, stdout io.Writer) error {
	v, ok := gorillaVariants[o.variant]
	if !ok {
		return fmt.Errorf("-variant %q: unknown", o.variant)
	}
	if o.url == "" || o.run <= 0 {
		return errors.New("-role gorilla needs -url and -run")
	}
	// A hard bound whatever happens to the sockets.
	go func() {
		time.Sleep(o.run + 30*time.Second)
		fmt.Fprintln(stdout, "errors 1: the gorilla role overran its run by 30s")
		os.Exit(1)
	}()
	var (
		nerr  atomic.Int64
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		if nerr.Add(1) == 1 {
			mu.Lock()
			first = err
			mu.Unlock()
		}
	}
	type conn struct {
		ws *websocket.Conn
		bc *batchConn
	}
	conns := make([]conn, 0, o.conns)
	for i := range o.conns {
		ws, bc, err := dialGorilla(o.url, v)
		if err != nil {
			fmt.Fprintf(stdout, "errors 1: dial %d: %v\n", i, err)
			os.Exit(1)
		}
		conns = append(conns, conn{ws, bc})
	}
	payload := bytes.Repeat([]byte("x"), o.size)
	deadline := time.Now().Add(o.run)
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			if err := gorillaLoop(c.ws, c.bc, payload, o.batch, deadline); err != nil {
				fail(err)
			}
			gorillaClose(c.ws, c.bc)
		})
	}
	wg.Wait()
	if n := nerr.Load(); n > 0 {
		fmt.Fprintf(stdout, "errors %d: %v\n", n, first)
		os.Exit(1)
	}
	return nil
}

// gorillaLoop is one connection's closed loop until deadline.
func gorillaLoop(ws *websocket.Conn, bc *batchConn, payload []byte, batch int, deadline time.Time) error {
	bound := deadline.Add(10 * time.Second) // no read or write may hang past this
	if err := ws.SetReadDeadline(bound); err != nil {
		return err
	}
	if err := ws.SetWriteDeadline(bound); err != nil {
		return err
	}
	for time.Now().Before(deadline) {
		for range batch {
			if err := ws.WriteMessage(websocket.TextMessage, payload); err != nil {
				return fmt.Errorf("write: %w", err)
			}
		}
		if bc != nil {
			if err := bc.Flush(); err != nil {
				return fmt.Errorf("write: %w", err)
			}
		}
		for range batch {
			mt, data, err := ws.ReadMessage()
			if err != nil {
				return fmt.Errorf("read: %w", err)
			}
			if mt != websocket.TextMessage || len(data) != len(payload) {
				return fmt.Errorf("echo mismatch: type %d, %d bytes, want text of %d", mt, len(data), len(payload))
			}
		}
	}
	return nil
}

// gorillaClose sends a close frame, waits briefly for the server's, and
// closes the socket; nothing here counts as an error.
func gorillaClose(ws *websocket.Conn, bc *batchConn) {
	if bc != nil {
		bc.buffering = false
	}
	_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	_ = ws.SetReadDeadline(time.Now().Add(time.Second))
	for {
		if _, _, err := ws.ReadMessage(); err != nil {
			break
		}
	}
	_ = ws.Close()
}

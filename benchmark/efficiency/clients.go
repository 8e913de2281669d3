package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"github.com/gorilla/websocket"
	"golang.org/x/sys/unix"
)

// roleResult is what a measuring child prints on its last line, after
// "result ", for the parent to read.
type roleResult struct {
	Impl     string  `json:"impl"`
	Messages int64   `json:"messages"`
	Seconds  float64 `json:"seconds"`
	Reads    int64   `json:"reads"` // read syscalls in the window
	UserS    float64 `json:"user_s"`
	SysS     float64 `json:"sys_s"`
	WaitS    float64 `json:"wait_s"` // time its threads waited for a CPU
	Errors   int64   `json:"errors"`
	Error    string  `json:"error,omitempty"`
}

func printResult(w io.Writer, r roleResult) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "result %s\n", b)
	return err
}

type snapshot struct {
	at              time.Time
	msgs            int64
	reads           int64
	user, sys, wait time.Duration
}

func takeSnapshot(msgs, reads int64) snapshot {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return snapshot{time.Now(), msgs, reads, time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), runDelay(os.Getpid())}
}

func (b snapshot) since(a snapshot, impl string) roleResult {
	return roleResult{
		Impl: impl, Messages: b.msgs - a.msgs, Seconds: b.at.Sub(a.at).Seconds(), Reads: b.reads - a.reads,
		UserS: (b.user - a.user).Seconds(), SysS: (b.sys - a.sys).Seconds(), WaitS: (b.wait - a.wait).Seconds(),
	}
}

// measure runs step (which handles some messages and says how many) until
// warm-up plus duration have passed, and reports the window after the
// warm-up.
func measure(o options, impl string, step step, reads func() int64) (roleResult, error) {
	var n int64
	start := time.Now()
	for time.Since(start) < o.warmup {
		k, err := step()
		if err != nil {
			return roleResult{}, err
		}
		n += int64(k)
	}
	a := takeSnapshot(n, reads())
	for time.Since(a.at) < o.duration {
		k, err := step()
		if err != nil {
			return roleResult{}, err
		}
		n += int64(k)
	}
	return takeSnapshot(n, reads()).since(a, impl), nil
}

// countingConn counts read syscalls for gorilla, which has no counter.
type countingConn struct {
	net.Conn
	reads int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.reads++
	return c.Conn.Read(p)
}

func gorillaDial(url string) (*websocket.Conn, *countingConn, error) {
	var cc *countingConn
	d := websocket.Dialer{NetDial: func(network, addr string) (net.Conn, error) {
		nc, err := net.Dial(network, addr)
		if err != nil {
			return nil, err
		}
		cc = &countingConn{Conn: nc}
		return cc, nil
	}}
	ws, _, err := d.Dial(url, nil)
	if err != nil {
		return nil, nil, err
	}
	return ws, cc, nil
}

const chunk = 1024 // messages between clock reads

// step handles some messages and says how many.
type step func() (int, error)

// clientRole dials -url with -impl and measures the step that impl's
// constructor builds, then prints the result line.
func clientRole(o options, stdout io.Writer, ours func(*wsconn.Conn) step, theirs func(*websocket.Conn) step) error {
	var r roleResult
	var err error
	switch o.impl {
	case "wsconn":
		c, derr := wsconn.Dial(context.Background(), o.url, wsconn.Options{})
		if derr != nil {
			return derr
		}
		defer c.Close()
		r, err = measure(o, "wsconn", ours(c), c.Reads)
	case "gorilla":
		ws, cc, derr := gorillaDial(o.url)
		if derr != nil {
			return derr
		}
		defer ws.Close()
		r, err = measure(o, "gorilla", theirs(ws), func() int64 { return cc.reads })
	default:
		return fmt.Errorf("-impl %q: want wsconn or gorilla", o.impl)
	}
	if err != nil {
		return err
	}
	return printResult(stdout, r)
}

// receive is the receive-path role: absorb the stream server's messages.
func receive(o options, stdout io.Writer) error {
	return clientRole(o, stdout,
		func(c *wsconn.Conn) step {
			return func() (int, error) {
				for range chunk {
					if _, _, err := c.ReadMessage(); err != nil {
						return 0, err
					}
				}
				return chunk, nil
			}
		},
		func(ws *websocket.Conn) step {
			return func() (int, error) {
				for range chunk {
					_, rd, err := ws.NextReader()
					if err != nil {
						return 0, err
					}
					if _, err := io.Copy(io.Discard, rd); err != nil {
						return 0, err
					}
				}
				return chunk, nil
			}
		})
}

// send is the send-path role: write frames of -size bytes, -batch at a
// time, to the sink.
func send(o options, stdout io.Writer) error {
	payload := make([]byte, o.size)
	batch := make([][]byte, o.batch)
	for i := range batch {
		batch[i] = payload
	}
	return clientRole(o, stdout,
		func(c *wsconn.Conn) step {
			return func() (int, error) { return len(batch), c.WriteBatch(wsconn.OpText, batch) }
		},
		func(ws *websocket.Conn) step {
			return func() (int, error) {
				for _, p := range batch {
					if err := ws.WriteMessage(websocket.TextMessage, p); err != nil {
						return 0, err
					}
				}
				return len(batch), nil
			}
		})
}

// echoLoop is the built-in echo generator: -conns connections, each in a
// closed loop of one WriteBatch of -batch messages then reading them back.
// It prints "window-start" and "window-end" around the measured window so
// the parent samples both processes' CPU over the same interval.
func echoLoop(o options, stdout io.Writer) error {
	payload := make([]byte, o.size)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	batch := make([][]byte, o.batch)
	for i := range batch {
		batch[i] = payload
	}
	type slot struct {
		msgs atomic.Int64
		_    [56]byte // keep counters on their own cache lines
	}
	slots := make([]slot, o.conns)
	expect := wsconn.ServerFrameSize(len(payload)) * len(batch)
	conns := make([]*wsconn.Conn, o.conns)
	for i := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := wsconn.Dial(ctx, o.url, wsconn.Options{})
		cancel()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		conns[i] = c
	}
	var errs atomic.Int64
	var firstErr sync.Once
	var errText string
	fail := func(err error) {
		firstErr.Do(func() { errText = err.Error() })
		errs.Add(1) // after the text: a reader that sees errs > 0 sees it
	}
	for i, c := range conns {
		go func() {
			for {
				if err := c.WriteBatch(wsconn.OpText, batch); err != nil {
					fail(err)
					return
				}
				if o.readAhead {
					c.ExpectBytes(expect)
				}
				for range batch {
					if _, _, err := c.ReadMessage(); err != nil {
						fail(err)
						return
					}
				}
				slots[i].msgs.Add(int64(len(batch)))
			}
		}()
	}
	sum := func() (msgs, reads int64) {
		for i, c := range conns {
			msgs += slots[i].msgs.Load()
			reads += c.Reads()
		}
		return
	}
	r := announcedWindow(o, stdout, "builtin", sum)
	r.Errors = errs.Load()
	if r.Errors > 0 {
		r.Error = errText
	}
	return printResult(stdout, r)
}

// announcedWindow sleeps the warm-up, then measures counters (messages,
// reads) and this process's CPU over -duration between the lines
// "window-start" and "window-end", so the parent samples the server's CPU
// over the same interval.
func announcedWindow(o options, stdout io.Writer, impl string, counters func() (msgs, reads int64)) roleResult {
	time.Sleep(o.warmup)
	a := takeSnapshot(counters())
	fmt.Fprintln(stdout, "window-start")
	time.Sleep(o.duration)
	b := takeSnapshot(counters())
	fmt.Fprintln(stdout, "window-end")
	return b.since(a, impl)
}

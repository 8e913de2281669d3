package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/ceiling-bench/ceiling/calibrate"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// floorLoop is the syscall-only generator, the kernel's floor per message:
// the echo generator's writes and reads with nothing else. Each of -conns
// connections writes one pre-framed masked batch of -batch messages with
// write(2) (framed once, before the window, and written again unchanged),
// sleeps in epoll until SO_RCVLOWAT says the whole batch of replies is
// there (a read per batch, as `ceiling load` does with ExpectBytes), reads
// it with read(2) into one shared buffer and counts its bytes, then writes
// the batch again. No frame is parsed and nothing is timed or recorded:
// what this process costs per message is the system calls and the TCP
// stack under them. It prints "window-start", "window-end" and a result
// line like echoLoop.
func floorLoop(o options, stdout io.Writer) error {
	payload := make([]byte, o.size)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	var fds []int
	var frames []byte
	for i := range o.conns {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c, err := wsconn.Dial(ctx, o.url, wsconn.Options{})
		cancel()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		if frames == nil {
			for range o.batch {
				frames = c.AppendFrame(frames, wsconn.OpText, payload)
			}
		}
		fd, buffered, err := c.Detach()
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		if len(buffered) > 0 {
			return fmt.Errorf("connection %d: %d bytes arrived before the first batch", i, len(buffered))
		}
		fds = append(fds, fd)
	}
	replyBytes := wsconn.ServerFrameSize(o.size)
	e, err := calibrate.NewEchoer(calibrate.EchoerConfig{Unit: replyBytes * o.batch, Reply: frames, Copies: 1, LowWater: true})
	if err != nil {
		return err
	}
	for _, fd := range fds {
		if err := e.Add(fd, 0, true); err != nil {
			return err
		}
	}
	done := make(chan struct{})
	go func() { e.Run(); close(done) }()
	defer func() { e.Close(); <-done }()
	msgs := func() (int64, int64) { return e.Units() * int64(o.batch), e.Reads() }
	r := announcedWindow(o, stdout, "floor", msgs)
	r.Errors, r.Error = e.Errors()
	return printResult(stdout, r)
}

// floorName is the floor's row in section 3.
const floorName = "syscall-only floor"

// Goals at batch >= 10 (issue 11): a generator's CPU per message at most
// floorGoalTotal times the floor's, and its user CPU per message at most
// floorGoalUser of refserver's.
const (
	floorGoalTotal = 1.25
	floorGoalUser  = 1.0 / 3
)

// writeFloor prints each generator's CPU per message as a multiple of the
// floor measured at the same batch in the same run: user+system, user
// alone, and user as a fraction of refserver's user CPU per message in
// the generator's own point; then whether the batch >= 10 goal holds.
func writeFloor(w io.Writer, points []echoPoint) {
	floor := map[int]echoPoint{}
	for _, p := range points {
		if p.generatorName == floorName {
			floor[p.batch] = p
		}
	}
	if len(floor) == 0 {
		return
	}
	fmt.Fprintf(w, "   floor multiples: generator CPU per message / the syscall-only floor's at the same batch (goal at batch >= 10: total <= %.2fx, user <= %.2f of refserver's)\n",
		floorGoalTotal, floorGoalUser)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "batch\tgenerator\ttotal/floor\tuser/floor user\tuser/srv user\tgoal\t")
	for _, p := range points {
		f, ok := floor[p.batch]
		if !ok {
			continue
		}
		total, totalOK := multiple(perMsg(p, p.gen.user+p.gen.sys), perMsg(f, f.gen.user+f.gen.sys), f)
		user, _ := multiple(perMsg(p, p.gen.user), perMsg(f, f.gen.user), f)
		srvUser, srvOK := multiple(perMsg(p, p.gen.user), perMsg(p, p.srv.user), p)
		goal := "-"
		if p.batch >= 10 && p.generatorName != floorName {
			goal = "no"
			t, u := perMsg(p, p.gen.user+p.gen.sys)/perMsg(f, f.gen.user+f.gen.sys), perMsg(p, p.gen.user)/perMsg(p, p.srv.user)
			if totalOK && srvOK && t <= floorGoalTotal && u <= floorGoalUser {
				goal = "yes"
			}
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t\n", p.batch, p.generatorName, total, user, srvUser, goal)
	}
	tw.Flush()
}

// multiple is a/b as "1.23x"; when b had no CPU tick (b is then below one
// tick per message of point q) it is a lower bound, "> 4.5x"; unknown
// when a had none.
func multiple(a, b float64, q echoPoint) (string, bool) {
	switch {
	case a <= 0:
		return "n/a (no tick)", false
	case b <= 0:
		tick := float64(time.Second/userHZ) / (q.ratePerS * q.sampledS)
		return fmt.Sprintf(">%.1fx", a/tick), false
	}
	return fmt.Sprintf("%.2fx", a/b), true
}

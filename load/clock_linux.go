package load

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// preciseTimer sleeps on a timerfd; it falls back to a Go timer where a
// timerfd cannot be made.
type preciseTimer struct {
	f        *os.File
	fd       int
	buf      [8]byte
	fallback Sleeper
}

func newPreciseTimer() *preciseTimer {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return &preciseTimer{fd: -1}
	}
	return &preciseTimer{f: os.NewFile(uintptr(fd), "pacer-timerfd"), fd: fd}
}

// sleep waits d nanoseconds (d > 0). It returns false once cancel ran.
func (p *preciseTimer) sleep(d int64, done <-chan struct{}) bool {
	if p.f != nil {
		spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d)}
		if unix.TimerfdSettime(p.fd, 0, &spec, nil) == nil {
			_, err := p.f.Read(p.buf[:])
			return err == nil
		}
	}
	return p.fallback.Until(Mono()+d, done)
}

// cancel makes a pending and every later sleep return false.
func (p *preciseTimer) cancel() {
	if p.f != nil {
		p.f.SetReadDeadline(time.Unix(1, 0))
	}
}

func (p *preciseTimer) close() {
	if p.f != nil {
		p.f.Close()
	}
	if p.fallback.t != nil {
		p.fallback.t.Stop()
	}
}

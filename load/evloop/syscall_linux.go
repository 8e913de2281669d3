package evloop

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The loops' sockets are non-blocking, so its reads and writes go
// straight to the kernel (RawSyscall) rather than through the runtime's
// entersyscall/exitsyscall, which would otherwise be paid per read and
// per write: user time per message is what the engine exists to save.

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// Boxed once, so the common errors cost no allocation.
var (
	errEAGAIN error = unix.EAGAIN
	errEINTR  error = unix.EINTR
)

func errnoErr(e unix.Errno) error {
	switch e {
	case unix.EAGAIN:
		return errEAGAIN
	case unix.EINTR:
		return errEINTR
	}
	return e
}

// epollWait is epoll_wait as a raw syscall, for zero timeouts only: a
// blocking one would hold the P from the process's other goroutines.
func epollWait(epfd int, events []unix.EpollEvent, msec int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(events))), uintptr(len(events)), uintptr(msec), 0, 0)
	if e != 0 {
		return 0, errnoErr(e)
	}
	return int(n), nil
}

// closeFd closes a descriptor with a raw syscall.
func closeFd(fd int) { _, _, _ = unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0) }

// timerfdSettime arms fd relative to now (flags 0), as a raw syscall.
func timerfdSettime(fd int, spec *unix.ItimerSpec) error {
	_, _, e := unix.RawSyscall6(unix.SYS_TIMERFD_SETTIME, uintptr(fd), 0, uintptr(unsafe.Pointer(spec)), 0, 0, 0)
	if e != 0 {
		return errnoErr(e)
	}
	return nil
}

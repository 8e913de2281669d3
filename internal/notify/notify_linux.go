package notify

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// watchDir is an inotify descriptor watching dir for names created in
// it or moved into it. It is non-blocking, so that the runtime's poller
// waits on it and Close ends a Read.
func watchDir(dir string) (*os.File, error) {
	fd, err := syscall.InotifyInit1(syscall.IN_CLOEXEC | syscall.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("readiness watch: %w", err)
	}
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_CREATE|syscall.IN_MOVED_TO|syscall.IN_ONLYDIR); err != nil {
		syscall.Close(fd)
		return nil, fmt.Errorf("readiness watch %s: %w", dir, err)
	}
	return os.NewFile(uintptr(fd), "inotify:"+dir), nil
}

// read reads the watch's events until Close.
func (w *Watcher) read() {
	defer close(w.done)
	buf := make([]byte, 64*(syscall.SizeofInotifyEvent+syscall.NAME_MAX+1))
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[off]))
			name := buf[off+syscall.SizeofInotifyEvent : off+syscall.SizeofInotifyEvent+int(ev.Len)]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			w.saw(string(name), ev.Mask&syscall.IN_Q_OVERFLOW != 0)
			off += syscall.SizeofInotifyEvent + int(ev.Len)
		}
	}
}

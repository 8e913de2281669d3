package main

import (
	"fmt"
	"io"
	"net"

	"github.com/ceiling-bench/ceiling/calibrate"
)

// listen announces "ready <addr>" on stdout for the parent, then runs
// handle for every connection.
func listen(stdout io.Writer, handle func(net.Conn)) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ready %s\n", ln.Addr())
	for {
		nc, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer nc.Close()
			if _, err := calibrate.Upgrade(nc); err == nil {
				handle(nc)
			}
		}()
	}
}

// serveStream writes one pre-framed 256 KiB buffer of unmasked text frames
// of -size bytes in a loop, as fast as the socket takes it, until the
// client goes away. The client's read path is the only work left to
// measure.
func serveStream(o options, stdout io.Writer) error {
	frame := calibrate.ServerFrame(make([]byte, o.size))
	for i := range frame[len(frame)-o.size:] {
		frame[len(frame)-o.size+i] = 'a' + byte(i%26)
	}
	n := max(1, (256<<10)/len(frame))
	buf := make([]byte, 0, n*len(frame))
	for range n {
		buf = append(buf, frame...)
	}
	return listen(stdout, func(nc net.Conn) {
		for {
			if _, err := nc.Write(buf); err != nil {
				return
			}
		}
	})
}

// serveSink reads and discards whatever the client sends.
func serveSink(o options, stdout io.Writer) error {
	return listen(stdout, func(nc net.Conn) {
		buf := make([]byte, 256<<10)
		for {
			if _, err := nc.Read(buf); err != nil {
				return
			}
		}
	})
}

package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
)

// upgrade reads the client's upgrade request and answers 101; it is all the
// HTTP the stream and sink servers speak.
func upgrade(nc net.Conn) error {
	req, err := http.ReadRequest(bufio.NewReader(nc))
	if err != nil {
		return err
	}
	h := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	_, err = fmt.Fprintf(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(h[:]))
	return err
}

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
			if upgrade(nc) == nil {
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
	frame := serverFrame(make([]byte, o.size))
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

func serverFrame(payload []byte) []byte {
	n := len(payload)
	switch {
	case n <= 125:
		return append([]byte{0x81, byte(n)}, payload...)
	case n <= 0xFFFF:
		return append([]byte{0x81, 126, byte(n >> 8), byte(n)}, payload...)
	}
	b := []byte{0x81, 127, 0, 0, 0, 0, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	return append(b, payload...)
}

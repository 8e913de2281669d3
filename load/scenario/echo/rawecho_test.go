package echo

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"testing"
)

// startRawEchoServer is an echo server that allocates nothing per message
// (unlike gorilla's NextReader), so testing.AllocsPerRun, which counts the
// whole process, sees only the generator's allocations. It handles the
// subset the generator sends: final, masked text/binary frames.
func startRawEchoServer(t *testing.T) string { return startRawEchoServerTB(t) }

func startRawEchoServerTB(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go rawEcho(nc)
		}
	}()
	return "ws://" + ln.Addr().String() + "/echo"
}

func rawEcho(nc net.Conn) {
	defer nc.Close()
	br := bufio.NewReaderSize(nc, 64<<10)
	bw := bufio.NewWriterSize(nc, 64<<10)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	h := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	bw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(h[:]) + "\r\n\r\n")
	bw.Flush()
	var hdr [14]byte
	payload := make([]byte, 0, 64<<10)
	for {
		if _, err := io.ReadFull(br, hdr[:2]); err != nil {
			return
		}
		op := hdr[0] & 0x0f
		n := uint64(hdr[1] & 0x7f)
		switch n {
		case 126:
			if _, err := io.ReadFull(br, hdr[2:4]); err != nil {
				return
			}
			n = uint64(binary.BigEndian.Uint16(hdr[2:4]))
		case 127:
			if _, err := io.ReadFull(br, hdr[2:10]); err != nil {
				return
			}
			n = binary.BigEndian.Uint64(hdr[2:10])
		}
		mask := hdr[10:14] // a local array would escape through io.ReadFull
		if _, err := io.ReadFull(br, mask); err != nil {
			return
		}
		if uint64(cap(payload)) < n {
			payload = make([]byte, n)
		}
		p := payload[:n]
		if _, err := io.ReadFull(br, p); err != nil {
			return
		}
		for i := range p {
			p[i] ^= mask[i&3]
		}
		if op == 0x8 { // close
			return
		}
		out := hdr[:0] // the mask is used up
		out = append(out, 0x80|op)
		switch {
		case n < 126:
			out = append(out, byte(n))
		case n < 1<<16:
			out = append(out, 126, byte(n>>8), byte(n))
		default:
			out = append(out, 127)
			out = binary.BigEndian.AppendUint64(out, n)
		}
		bw.Write(out)
		bw.Write(p)
		if br.Buffered() == 0 {
			if bw.Flush() != nil {
				return
			}
		}
	}
}

package calibrate

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
)

// Upgrade reads a client's WebSocket upgrade request from nc and answers
// 101: all the HTTP the null sink and make bench's raw servers speak. It
// returns the bytes read past the request (frames the client sent right
// behind it).
func Upgrade(nc net.Conn) ([]byte, error) {
	br := bufio.NewReader(nc)
	req, err := http.ReadRequest(br)
	if err != nil {
		return nil, err
	}
	h := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if _, err := fmt.Fprintf(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: %s\r\n\r\n",
		base64.StdEncoding.EncodeToString(h[:])); err != nil {
		return nil, err
	}
	rest, _ := br.Peek(br.Buffered())
	return bytes.Clone(rest), nil
}

// ServerFrame is one unmasked text frame holding payload.
func ServerFrame(payload []byte) []byte {
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

// ClientFrameSize is the bytes of one masked client frame of n payload
// bytes: the server frame's plus the 4-byte mask.
func ClientFrameSize(n int) int { return len(ServerFrame(nil)) + extLen(n) + 4 + n }

func extLen(n int) int {
	switch {
	case n <= 125:
		return 0
	case n <= 0xFFFF:
		return 2
	}
	return 8
}

package wsconn

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// acceptGUID is the fixed string of RFC 6455 1.3.
const acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// Dial connects to a ws:// URL and performs the opening handshake. See the
// package comment.
func Dial(ctx context.Context, rawURL string, opts Options) (*Conn, error) {
	opts = opts.withDefaults()
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("websocket: url %q: %w", rawURL, err)
	}
	if u.Scheme != "ws" {
		return nil, fmt.Errorf("websocket: url %q: scheme must be ws:// (got %q)", rawURL, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("websocket: url %q: no host", rawURL)
	}
	hostport := u.Host
	if u.Port() == "" {
		hostport = net.JoinHostPort(u.Hostname(), "80")
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.HandshakeTimeout)
		defer cancel()
	}
	nc, err := opts.dialer(ctx).DialContext(ctx, "tcp", hostport)
	if err != nil {
		return nil, fmt.Errorf("websocket: dial %s: %w", rawURL, err)
	}
	c := newConn(nc, nc, nc, opts)
	if err := c.handshake(ctx, u, opts.Header); err != nil {
		nc.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) handshake(ctx context.Context, u *url.URL, extra http.Header) error {
	dl, _ := ctx.Deadline()
	_ = c.nc.SetDeadline(dl)
	// Cancelling ctx mid-handshake unblocks the read or write in progress.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	var kb [16]byte
	_, _ = rand.Read(kb[:])
	key := base64.StdEncoding.EncodeToString(kb[:])

	path := u.RequestURI()
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n", path, u.Host, key)
	for k, vs := range extra {
		for _, v := range vs {
			fmt.Fprintf(&req, "%s: %s\r\n", k, v)
		}
	}
	req.WriteString("\r\n")
	if _, err := c.nc.Write(req.Bytes()); err != nil {
		return c.ctxErr(ctx, fmt.Errorf("websocket: handshake with %s: write: %w", u, err))
	}

	// Read until the end of the response headers; whatever follows them is
	// already frames and stays in rbuf.
	end := -1
	for end < 0 {
		if c.w == len(c.rbuf) {
			if len(c.rbuf) >= c.rsize {
				return &HandshakeError{URL: u.String(), Reason: fmt.Sprintf("response headers larger than the %d-byte read buffer", c.rsize)}
			}
			c.growRead(min(2*len(c.rbuf), c.rsize))
		}
		n, err := c.nc.Read(c.rbuf[c.w:])
		c.w += n
		if i := bytes.Index(c.rbuf[:c.w], []byte("\r\n\r\n")); i >= 0 {
			end = i + 4
			break
		}
		if err != nil {
			return c.ctxErr(ctx, fmt.Errorf("websocket: handshake with %s: read: %w", u, err))
		}
	}
	resp, err := http.ReadResponse(bufio.NewReaderSize(bytes.NewReader(c.rbuf[:end]), end), nil)
	if err != nil {
		return fmt.Errorf("websocket: handshake with %s: bad response: %w", u, err)
	}
	c.r = end
	if resp.StatusCode != http.StatusSwitchingProtocols {
		body := c.rbuf[end:c.w]
		if len(body) > 512 {
			body = body[:512]
		}
		return &HandshakeError{URL: u.String(), Status: resp.StatusCode, Body: strings.TrimSpace(string(body)), Reason: "server did not switch protocols"}
	}
	h := resp.Header
	switch {
	case !strings.EqualFold(h.Get("Upgrade"), "websocket"):
		return &HandshakeError{URL: u.String(), Status: resp.StatusCode, Reason: fmt.Sprintf("Upgrade header is %q, want websocket", h.Get("Upgrade"))}
	case !headerHasToken(h, "Connection", "upgrade"):
		return &HandshakeError{URL: u.String(), Status: resp.StatusCode, Reason: fmt.Sprintf("Connection header is %q, want Upgrade", h.Get("Connection"))}
	case h.Get("Sec-WebSocket-Accept") != acceptKey(key):
		return &HandshakeError{URL: u.String(), Status: resp.StatusCode, Reason: "wrong Sec-WebSocket-Accept"}
	case h.Get("Sec-WebSocket-Extensions") != "":
		return &HandshakeError{URL: u.String(), Status: resp.StatusCode, Reason: "server chose extensions " + h.Get("Sec-WebSocket-Extensions") + " that were not offered"}
	}
	_ = c.nc.SetDeadline(time.Time{})
	return nil
}

// ctxErr prefers the context's reason when it is what cut the handshake.
func (c *Conn) ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return err
}

func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + acceptGUID))
	return base64.StdEncoding.EncodeToString(h[:])
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

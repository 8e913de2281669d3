package wsconn

import (
	"fmt"
)

// Close codes of RFC 6455 7.4.1 (and the IANA registry) that the generator
// meets.
const (
	CloseNormalClosure    = 1000
	CloseGoingAway        = 1001
	CloseProtocolError    = 1002
	CloseUnsupportedData  = 1003
	CloseNoStatusReceived = 1005 // the close frame carried no code
	CloseAbnormalClosure  = 1006 // never on the wire
	CloseInvalidPayload   = 1007
	ClosePolicyViolation  = 1008
	CloseMessageTooBig    = 1009
	CloseInternalError    = 1011
	CloseServiceRestart   = 1012
)

// CloseError is returned by ReadMessage when the server sent a close frame.
// Code is CloseNoStatusReceived when the frame carried no code.
type CloseError struct {
	Code int
	Text string
}

func (e *CloseError) Error() string {
	if e.Text == "" {
		return fmt.Sprintf("websocket: closed by server with code %d", e.Code)
	}
	return fmt.Sprintf("websocket: closed by server with code %d: %s", e.Code, e.Text)
}

// HandshakeError is returned by Dial when the server did not switch
// protocols, or switched with a wrong Sec-WebSocket-Accept.
type HandshakeError struct {
	URL    string
	Status int    // HTTP status of the response
	Body   string // the start of the response body, if it came with the headers
	Reason string // what was wrong
}

func (e *HandshakeError) Error() string {
	s := fmt.Sprintf("websocket: handshake with %s failed: %s (HTTP %d)", e.URL, e.Reason, e.Status)
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// ProtocolError is a frame from the server that breaks RFC 6455 or the
// Conn's limits.
type ProtocolError struct{ Reason string }

func (e *ProtocolError) Error() string { return "websocket: protocol error: " + e.Reason }

package wsconn

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// dribbleServer answers the upgrade, sends first frames at once, then the
// rest one write each, a millisecond apart: the segments an eager reader
// would wake up for one by one.
func dribbleServer(t *testing.T, first, rest int) string {
	t.Helper()
	return serveRaw(t, func(nc net.Conn, req *http.Request, done <-chan struct{}) {
		resp := "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			acceptKey(req.Header.Get("Sec-WebSocket-Key")) + "\r\n\r\n"
		if _, err := nc.Write([]byte(resp)); err != nil {
			return
		}
		var burst []byte
		for i := range first {
			burst = append(burst, serverFrame(true, OpText, []byte(fmt.Sprintf("m%03d", i)))...)
		}
		nc.Write(burst)
		time.Sleep(50 * time.Millisecond)
		for i := first; i < first+rest; i++ {
			if _, err := nc.Write(serverFrame(true, OpText, []byte(fmt.Sprintf("m%03d", i)))); err != nil {
				return
			}
			time.Sleep(time.Millisecond)
		}
		<-done
	})
}

func TestExpectBytesWakesOncePerRun(t *testing.T) {
	t.Parallel()
	const first, rest = 10, 40
	c := dial(t, dribbleServer(t, first, rest), Options{})
	time.Sleep(20 * time.Millisecond) // let the burst land: ExpectBytes must count it
	c.ExpectBytes((first + rest) * ServerFrameSize(4))
	for i := range first + rest {
		_, p, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v (an expectation the reader cannot meet would end here on the deadline)", i, err)
		}
		if want := fmt.Sprintf("m%03d", i); string(p) != want {
			t.Fatalf("message %d = %q, want %q", i, p, want)
		}
	}
	if err := c.LowWaterErr(); err != nil {
		t.Fatalf("LowWaterErr: %v", err)
	}
	// The burst may take a read or two; the 40 dribbled frames one more,
	// not 40.
	if got := c.Reads(); got > 4 {
		t.Errorf("Reads() = %d for %d frames, %d of them in separate segments; want <= 4", got, first+rest, rest)
	}
}

func TestExpectBytesZeroReadsEagerly(t *testing.T) {
	t.Parallel()
	c := dial(t, dribbleServer(t, 1, 5), Options{})
	c.ExpectBytes(6 * ServerFrameSize(4))
	c.ExpectBytes(0) // changed our mind: every message as it comes
	for i := range 6 {
		if _, _, err := c.ReadMessage(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
}

func TestServerFrameSize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 125, 126, 65535, 65536} {
		if got, want := ServerFrameSize(n), len(serverFrame(true, OpText, make([]byte, n))); got != want {
			t.Errorf("ServerFrameSize(%d) = %d, want %d", n, got, want)
		}
	}
}

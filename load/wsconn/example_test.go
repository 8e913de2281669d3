package wsconn_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/ceiling-bench/ceiling/load/wsconn"
	"github.com/gorilla/websocket"
)

// A batch framed into one write, and the echoes read back.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer ws.Close()
		for {
			mt, p, err := ws.ReadMessage()
			if err != nil || ws.WriteMessage(mt, p) != nil {
				return
			}
		}
	}))
	defer srv.Close()

	c, err := wsconn.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), wsconn.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()

	var buf []byte
	for _, s := range []string{"one", "two", "three"} {
		buf = c.AppendFrame(buf, wsconn.OpText, []byte(s))
	}
	if err := c.Write(buf); err != nil { // one write for the batch
		fmt.Println(err)
		return
	}
	c.ExpectBytes(3*wsconn.ServerFrameSize(3) + 2) // "three" is 2 bytes longer
	for range 3 {
		op, p, err := c.ReadMessage()
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(op, string(p))
	}
	// Output:
	// text one
	// text two
	// text three
}

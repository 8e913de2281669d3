// Command server is a WebSocket echo server: the example user repository
// of ceiling's docs/your-server.md. It sends every message back, as is.
//
//	go build -o bin/server . && bin/server --listen 127.0.0.1:8080
//
// Its per-message work (rounds of SHA-256 over the message) is what a pull
// request changes in ceiling's end-to-end test, to show the verdict.
package main

import (
	"crypto/sha256"
	"flag"
	"log"
	"net/http"

	"github.com/gorilla/websocket"
)

// rounds of SHA-256 each message costs before it is sent back.
const rounds = 0

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func echo(w http.ResponseWriter, r *http.Request) {
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer c.Close()
	for {
		kind, msg, err := c.ReadMessage()
		if err != nil {
			return
		}
		sum := sha256.Sum256(msg)
		for range rounds {
			sum = sha256.Sum256(sum[:])
		}
		if err := c.WriteMessage(kind, msg); err != nil {
			return
		}
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8080", "address to listen on")
	flag.Parse()
	http.HandleFunc("/echo", echo)
	http.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	log.Printf("listening on %s", *listen)
	log.Fatal(http.ListenAndServe(*listen, nil))
}

package script

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// chatServer is a small JSON relay with a protocol of its own (not rooms),
// so that the engine is tested against a server its file was written for
// from docs/scenarios.md alone:
//
//	-> {"op":"hello","chan":"ch3","me":"c5"}   <- {"op":"motd",...} then {"op":"welcome"}
//	   (chan "forbidden": <- {"op":"denied"})
//	-> {"op":"say","t":T,"n":ID,"p":P}        <- others: {"op":"heard","ch":..,"by":"c5","s":SEQ,"t":T,"p":P}
//	                                          <- sender: {"op":"ok","n":ID,"s":SEQ}
//	   over the per-connection limit:         <- sender: {"op":"err","code":"slow","n":ID}
//	<- {"op":"ping","k":N} every pingEvery     -> {"op":"pong","k":..}
//	POST /publish/ch3 {"t":T,"p":P} signed X-Sig: hex HMAC-SHA256 -> heard by every member
type chatServer struct {
	skipEvery int           // every Nth say skips a sequence number
	limit     int64         // says accepted per connection (0: no limit)
	closeAt   int64         // close the connection with 4429 at this say (0: never)
	pingEvery time.Duration // 0: no pings
	key       string        // HMAC key of /publish
	welcomeIn time.Duration // delay before welcome
	slowPost  time.Duration // delay before answering /publish

	mu    sync.Mutex
	chans map[string]*channel
	pongs atomic.Int64
	says  atomic.Int64
	srv   *http.Server
	url   string
}

type channel struct {
	seq     int64
	accept  int64
	members map[*member]bool
}

type member struct {
	ws *websocket.Conn
	mu sync.Mutex // one writer at a time
	me string
}

func (m *member) send(v any) {
	b, _ := json.Marshal(v)
	m.mu.Lock()
	m.ws.WriteMessage(websocket.TextMessage, b)
	m.mu.Unlock()
}

func startChat(t *testing.T, cs *chatServer) *chatServer {
	t.Helper()
	cs.chans = map[string]*channel{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/chat", cs.serveWS)
	mux.HandleFunc("/publish/", cs.servePublish)
	cs.srv = &http.Server{Handler: mux}
	go cs.srv.Serve(ln)
	t.Cleanup(func() { cs.srv.Close() })
	cs.url = "ws://" + ln.Addr().String()
	return cs
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }, Subprotocols: []string{"chat.v1"}}

// serveWS wants the chat.v1 subprotocol, and a hello whose "me" is the
// X-Client header of the upgrade (the file's connect.headers).
func (cs *chatServer) serveWS(w http.ResponseWriter, r *http.Request) {
	if !slices.Contains(websocket.Subprotocols(r), "chat.v1") {
		http.Error(w, "subprotocol chat.v1 required", http.StatusBadRequest)
		return
	}
	client := r.Header.Get("X-Client")
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	m := &member{ws: ws}
	var ch *channel
	var said int64
	done := make(chan struct{})
	defer close(done)
	if cs.pingEvery > 0 {
		go func() {
			tk := time.NewTicker(cs.pingEvery)
			defer tk.Stop()
			for k := 0; ; k++ {
				select {
				case <-tk.C:
					m.send(map[string]any{"op": "ping", "k": k})
				case <-done:
					return
				}
			}
		}()
	}
	defer func() {
		if ch != nil {
			cs.mu.Lock()
			delete(ch.members, m)
			cs.mu.Unlock()
		}
	}()
	for {
		_, b, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var in struct {
			Op   string          `json:"op"`
			Chan string          `json:"chan"`
			Me   string          `json:"me"`
			T    int64           `json:"t"`
			N    string          `json:"n"`
			P    json.RawMessage `json:"p"`
		}
		if json.Unmarshal(b, &in) != nil {
			continue
		}
		switch in.Op {
		case "hello":
			if in.Chan == "forbidden" || in.Me != client {
				m.send(map[string]any{"op": "denied"})
				continue
			}
			m.send(map[string]any{"op": "motd", "text": "be nice"})
			time.Sleep(cs.welcomeIn)
			cs.mu.Lock()
			ch = cs.chans[in.Chan]
			if ch == nil {
				ch = &channel{members: map[*member]bool{}}
				cs.chans[in.Chan] = ch
			}
			m.me = in.Me
			ch.members[m] = true
			cs.mu.Unlock()
			m.send(map[string]any{"op": "welcome"})
		case "pong":
			cs.pongs.Add(1)
		case "say":
			if ch == nil {
				continue
			}
			said++
			if cs.closeAt > 0 && said == cs.closeAt {
				m.mu.Lock()
				ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4429, "too fast"), time.Now().Add(time.Second))
				m.mu.Unlock()
				return
			}
			if cs.limit > 0 && said > cs.limit {
				m.send(map[string]any{"op": "err", "code": "slow", "n": in.N})
				continue
			}
			cs.says.Add(1)
			cs.relay(ch, m, in.T, in.P, in.N)
		}
	}
}

// relay numbers a message in its channel and sends it, under the
// channel's lock so every member sees sequence numbers in order.
func (cs *chatServer) relay(ch *channel, from *member, ts int64, p json.RawMessage, id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	ch.accept++
	ch.seq++
	if cs.skipEvery > 0 && ch.accept%int64(cs.skipEvery) == 0 {
		ch.seq++
	}
	by := "http"
	if from != nil {
		by = from.me
	}
	for o := range ch.members {
		if o != from {
			o.send(map[string]any{"op": "heard", "ch": "x", "by": by, "s": ch.seq, "t": ts, "p": p})
		}
	}
	if from != nil {
		from.send(map[string]any{"op": "ok", "n": id, "s": ch.seq})
	}
}

func (cs *chatServer) servePublish(w http.ResponseWriter, r *http.Request) {
	time.Sleep(cs.slowPost)
	body, _ := io.ReadAll(r.Body)
	mac := hmac.New(sha256.New, []byte(cs.key))
	mac.Write(body)
	if want := "sha256=" + hex.EncodeToString(mac.Sum(nil)); r.Header.Get("X-Sig") != want {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var in struct {
		T int64           `json:"t"`
		P json.RawMessage `json:"p"`
	}
	if json.Unmarshal(body, &in) != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, "/publish/")
	cs.mu.Lock()
	ch := cs.chans[name]
	cs.mu.Unlock()
	if ch == nil {
		http.Error(w, "no such channel", http.StatusNotFound)
		return
	}
	cs.relay(ch, nil, in.T, in.P, "")
	w.WriteHeader(http.StatusAccepted)
}

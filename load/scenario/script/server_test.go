package script

import (
	"bytes"
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

	"github.com/ceiling-bench/ceiling/load"
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
	// joinFrames: every member's messages are queued and written every
	// few ms as one frame, one message per line (Centrifugo's way).
	joinFrames bool
	// welcomeAlone: with joinFrames, the welcome is a frame of its own
	// (what was queued before it goes first, in its own frame), so a
	// client that does not split frames can connect, however late the
	// flusher runs on a busy machine.
	welcomeAlone bool
	// emptyPing: pings are {} and a {} back is the pong.
	emptyPing bool
	// okOnBadSig answers a bad signature 200 {"code":401,...}, as
	// Pusher-protocol servers such as soketi do.
	okOnBadSig bool

	mu     sync.Mutex
	chans  map[string]*channel
	pongs  atomic.Int64
	multi  atomic.Int64 // joined frames written with more than one message
	hidden atomic.Int64 // heard messages behind another in a joined frame
	// hiddenAt is when each flush hid heard messages (load.Mono, and how
	// many): a test asks how many it hid within a measured window.
	hiddenMu sync.Mutex
	hiddenAt [][2]int64
	says     atomic.Int64
	srv      *http.Server
	url      string
}

type channel struct {
	seq     int64
	accept  int64
	members map[*member]bool
}

type member struct {
	ws     *websocket.Conn
	mu     sync.Mutex // one writer at a time
	me     string
	joined bool   // queue into buf (joinFrames)
	buf    []byte // queued lines
	frames atomic.Int64
	multi  *atomic.Int64 // frames that held more than one message
	hidden *atomic.Int64 // heard messages not first in their frame
	cs     *chatServer
}

// hiddenBetween is how many heard messages the server hid behind another
// in a frame it wrote between from and to (load.Mono).
func (cs *chatServer) hiddenBetween(from, to int64) int64 {
	cs.hiddenMu.Lock()
	defer cs.hiddenMu.Unlock()
	var n int64
	for _, h := range cs.hiddenAt {
		if h[0] >= from && h[0] <= to {
			n += h[1]
		}
	}
	return n
}

func (m *member) send(v any) {
	b, _ := json.Marshal(v)
	m.sendRaw(b)
}

func (m *member) sendRaw(b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.joined {
		if len(m.buf) > 0 {
			m.buf = append(m.buf, '\n')
		}
		m.buf = append(m.buf, b...)
		return
	}
	m.ws.WriteMessage(websocket.TextMessage, b)
}

// sendAlone writes v as a frame of its own, after what was queued.
func (m *member) sendAlone(v any) {
	b, _ := json.Marshal(v)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flushLocked()
	m.ws.WriteMessage(websocket.TextMessage, b)
}

// flush writes the queued lines as one frame.
func (m *member) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.flushLocked()
}

func (m *member) flushLocked() {
	if len(m.buf) == 0 {
		return
	}
	if i := bytes.IndexByte(m.buf, '\n'); i >= 0 {
		m.multi.Add(1)
		n := int64(bytes.Count(m.buf[i:], []byte(`"op":"heard"`)))
		m.hidden.Add(n)
		if n > 0 && m.cs != nil {
			m.cs.hiddenMu.Lock()
			m.cs.hiddenAt = append(m.cs.hiddenAt, [2]int64{load.Mono(), n})
			m.cs.hiddenMu.Unlock()
		}
	}
	m.ws.WriteMessage(websocket.TextMessage, m.buf)
	m.buf = m.buf[:0]
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
	m := &member{ws: ws, joined: cs.joinFrames, multi: &cs.multi, hidden: &cs.hidden, cs: cs}
	var ch *channel
	var said int64
	done := make(chan struct{})
	defer close(done)
	if cs.joinFrames {
		go func() {
			tk := time.NewTicker(3 * time.Millisecond)
			defer tk.Stop()
			for {
				select {
				case <-tk.C:
					m.flush()
				case <-done:
					return
				}
			}
		}()
	}
	if cs.pingEvery > 0 {
		go func() {
			tk := time.NewTicker(cs.pingEvery)
			defer tk.Stop()
			for k := 0; ; k++ {
				select {
				case <-tk.C:
					if cs.emptyPing {
						m.sendRaw([]byte("{}"))
						continue
					}
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
		if cs.emptyPing && bytes.Equal(bytes.TrimSpace(b), []byte("{}")) {
			cs.pongs.Add(1)
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
			if cs.welcomeAlone {
				m.sendAlone(map[string]any{"op": "welcome"})
				continue
			}
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
		if cs.okOnBadSig {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"error":"bad signature","code":401}`))
			return
		}
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

package script

import "time"

// Spec is a parsed, compiled scenario file. It is immutable once parsed
// and shared by every connection.
type Spec struct {
	Name        string
	Description string
	// Objective is the file's service-level objective for a sweep
	// (load/objective syntax), "" when it has none.
	Objective string
	// Ladder and QuickLadder are the file's connection ladders for a
	// sweep ("sweep": {"connections": [...], "quick": [...]}), nil when
	// it gives none.
	Ladder      []int
	QuickLadder []int
	// EnvNames are the environment variables the file reads, sorted:
	// its {env:NAME} and its sign.key_env.
	EnvNames    []string
	ClientID    *Template
	Connect     connectSpec
	RoomSize    int // members per room (rooms = ceil(connections/size)); 0 when RoomCount is set
	RoomCount   int
	Roles       []*roleSpec
	Receives    []*recvSpec
	RateLimited *rateSpec
	Errors      *errorSpec

	kinds []kindDef  // summary.kinds entries, in file order
	paths [][]string // distinct match paths; matchers index into it
}

type kindDef struct {
	name   string
	typ    string // send | relay | ack | ignore
	send   bool   // some role sends it
	recv   *recvSpec
	hasExp bool // expected is computed (relay, ack; not coalesced)
}

type header struct {
	name  string
	value *Template
}

type connectSpec struct {
	URL         *Template
	Headers     []header
	Subprotocol string
	// SplitLines: connect.split "newline", a frame may hold several
	// messages, one per line.
	SplitLines bool
	Timeout    time.Duration
	Handshake  []step
	Answers    []answer
}

type step struct {
	Send  *Template
	Await *matcher
	Fail  *matcher
}

type answer struct {
	Match matcher
	Reply *Template
}

type roleSpec struct {
	Name      string
	Share     float64 // 0 when not a share role
	Count     int     // -1 when not a count role
	WebSocket bool
	Sends     []*sendSpec
	Closed    bool // the role's sends run in a closed loop
}

type sendSpec struct {
	Name         string
	kind         int
	Message      *Template
	ID           *Template
	Rate         float64 // per connection, per second; 0 in a closed loop
	Await        int     // closed loop: index of the receive kind awaited
	AwaitTimeout time.Duration
	HTTP         *httpSpec
	path         string
	relayKinds   []int // receive kinds relaying this send
	ackKinds     []int
}

type httpSpec struct {
	Method  string
	URL     *Template
	Headers []header
	Sign    *signSpec
	// Errors are response bodies that mean the send failed, whatever
	// the status: a server that answers 200 with {"code":401} refused it.
	Errors *errorSpec
	// BodyCode (http.body_code, default true): a 2xx response whose
	// JSON body has a top-level numeric "code" of 400 or more failed, as
	// an error server_<code>: APIs that answer every request 200 say a
	// refusal there (a Pusher server's {"code":401}). Errors is checked
	// first.
	BodyCode bool
	// uses are the variables its URL, headers and signing string name.
	uses [numVars]bool
}

type signSpec struct {
	Func   string
	KeyEnv string
	// Header or Query (one of them) receives prefix + the signature.
	Header, Query string
	// String is the string to sign; nil: the body.
	String   *Template
	Encoding string
	Prefix   string
	path     string // JSON path of key_env, for errors
}

type recvSpec struct {
	Kind      string
	kind      int
	Type      string
	Match     matcher
	Of        string
	of        *sendSpec // any role's send of that name, for its kind
	TS        []string
	Sender    []string
	Version   []string
	ID        []string
	Coalesced bool

	// When every field path is one top-level key, they are read in one
	// pass: top lists the keys, topIdx[field] is its index in top or -1.
	top    []string
	topIdx [numFields]int
}

// plan decides how r's fields are read.
func (r *recvSpec) plan() {
	r.top = nil
	for f := range r.topIdx {
		r.topIdx[f] = -1
	}
	var keys []string
	for f, p := range [numFields][]string{r.TS, r.Sender, r.Version, r.ID} {
		if p == nil {
			continue
		}
		if len(p) != 1 {
			return
		}
		idx := -1
		for k, key := range keys {
			if key == p[0] {
				idx = k
			}
		}
		if idx < 0 {
			idx = len(keys)
			keys = append(keys, p[0])
		}
		r.topIdx[f] = idx
	}
	if len(keys) > 0 {
		r.top = keys
	}
}

type rateSpec struct {
	Match      *matcher
	ID         []string
	CloseCodes []int
}

type errorSpec struct {
	Match  matcher
	Reason []string
}

type matchField struct {
	path int
	want []byte // compact JSON
}

type matcher struct {
	fields []matchField
	empty  bool // matches the message {} (whitespace aside) and nothing else
}

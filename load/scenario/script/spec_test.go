package script

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
)

// base is a small valid file; the table below breaks it one field at a
// time.
const base = `{
  "client_id": "c{conn}",
  "connect": {"url": "{url}/ws", "handshake": [{"send": {"op": "hello", "id": "{client}"}, "await": {"op": "welcome"}}]},
  "rooms": {"size": 4},
  "roles": [
    {"name": "talker", "share": 0.25, "sends": [{"name": "say", "rate": 5, "id": "{client}-{seq}", "message": {"op": "say", "t": "{ts_ns}", "n": "{id}", "p": "{payload}"}}]},
    {"name": "listener"}
  ],
  "receives": [
    {"kind": "heard", "match": {"op": "heard"}, "type": "relay", "of": "say", "ts": "t", "sender": "by"},
    {"kind": "ok", "match": {"op": "ok"}, "type": "ack", "of": "say", "id": "n"}
  ]
}`

func TestParseBase(t *testing.T) {
	s, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Roles) != 2 || s.Roles[0].Share != 0.25 || s.Roles[1].Count != -1 || s.RoomSize != 4 {
		t.Fatalf("roles/rooms parsed wrong: %+v", s)
	}
	var names []string
	for _, k := range s.kinds {
		names = append(names, k.name+":"+k.typ)
	}
	if got := strings.Join(names, " "); got != "say:send heard:relay ok:ack" {
		t.Fatalf("kinds = %s", got)
	}
	vs := &vars{}
	vs.ints[varTsNs] = 77
	vs.strs[varID] = []byte(`c1-"2`)
	vs.strs[varPayload] = []byte("xx\n")
	got := string(s.Roles[0].Sends[0].Message.Append(nil, vs))
	if want := `{"op":"say","t":77,"n":"c1-\"2","p":"xx\n"}`; got != want {
		t.Fatalf("rendered %s, want %s", got, want)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, old, new, want string
	}{
		{"unknown top-level field", `"client_id"`, `"clientid"`, `clientid: unknown field`},
		{"unknown nested field", `"rate": 5`, `"rate": 5, "burst": 2`, `roles[0].sends[0].burst: unknown field`},
		{"share out of range", `"share": 0.25`, `"share": 1.5`, `roles[0].share: 1.5: want a fraction`},
		{"share wrong type", `"share": 0.25`, `"share": "25%"`, `roles[0].share: want a number, got a string`},
		{"shares do not sum to 1", `{"name": "listener"}`, `{"name": "listener", "share": 0.5}`, `roles: shares sum to 0.75`},
		{"shares over 1", `{"name": "listener"}`, `{"name": "listener", "share": 0.9}`, `roles: shares sum to 1.15, more than 1`},
		{"two rest roles", `"share": 0.25`, `"websocket": true`, `roles[1]: roles[0] already takes the rest`},
		{"share and count", `"share": 0.25`, `"share": 0.25, "count": 3`, `roles[0]: give share or count, not both`},
		{"count negative", `"share": 0.25`, `"count": -1`, `roles[0].count: -1 is out of range`},
		{"unknown variable", `"t": "{ts_ns}"`, `"t": "{tsns}"`, `roles[0].sends[0].message: unknown variable {tsns}`},
		{"variable not allowed here", `"c{conn}"`, `"c{seq}"`, `client_id: unknown variable {seq}`},
		{"id variable without id", `"id": "{client}-{seq}", `, ``, `roles[0].sends[0].message: unknown variable {id}`},
		{"unclosed brace", `"{url}/ws"`, `"{url/ws"`, `connect.url: unclosed { in "{url/ws"`},
		{"stray brace", `"{url}/ws"`, `"{url}/ws}"`, `connect.url: unmatched }`},
		{"no rate or closed", `"rate": 5, `, ``, `roles[0].sends[0]: give rate`},
		{"rate and closed", `"rate": 5`, `"rate": 5, "closed": {"await": "ok"}`, `roles[0].sends[0]: give rate (open loop) or closed`},
		{"await unknown kind", `"rate": 5`, `"closed": {"await": "nope"}`, `roles[0].sends[0].closed.await: "nope" is not a receive kind`},
		{"await a relay", `"rate": 5`, `"closed": {"await": "heard"}`, `roles[0].sends[0].closed.await: "heard" is not an ack of this send`},
		{"relay without ts", `"ts": "t", `, ``, `receives[0]: a relay kind needs ts`},
		{"of unknown send", `"of": "say", "ts"`, `"of": "shout", "ts"`, `receives[0].of: "shout" is not the name of any role's send`},
		{"bad type", `"type": "relay"`, `"type": "broadcast"`, `receives[0].type: "broadcast": want relay, ack or ignore`},
		{"bad split", `"url": "{url}/ws",`, `"url": "{url}/ws", "split": "lines",`, `connect.split: "lines": want "newline"`},
		{"empty path element", `"sender": "by"`, `"sender": "a..b"`, `receives[0].sender: "a..b": empty element`},
		{"ack by id without send id", `"id": "{client}-{seq}", "message": {"op": "say", "t": "{ts_ns}", "n": "{id}",`, `"message": {"op": "say", "t": "{ts_ns}",`, `receives[1]: an ack matched by id needs the send "say" to have an id`},
		{"rooms both", `{"size": 4}`, `{"size": 4, "count": 2}`, `rooms: give exactly one of size`},
		{"rooms zero", `{"size": 4}`, `{"size": 0}`, `rooms.size: 0 is out of range`},
		{"rooms not object", `"rooms": {"size": 4},`, `"rooms": 4,`, `rooms: want an object, got a number`},
		{"roles missing", `"roles": [`, `"roless": [`, `roless: unknown field`},
		{"duplicate role", `{"name": "listener"}`, `{"name": "talker"}`, `roles[1].name: "talker" is already the name`},
		{"bad role name", `{"name": "listener"}`, `{"name": "list ener"}`, `roles[1].name: "list ener": want letters`},
		{"handshake step empty", `[{"send": {"op": "hello", "id": "{client}"}, "await": {"op": "welcome"}}]`, `[{}]`, `connect.handshake[0]: a step needs send, await or both`},
		{"timeout type", `"url": "{url}/ws",`, `"url": "{url}/ws", "timeout_ms": 1.5,`, `connect.timeout_ms: want an integer`},
		{"ignore with ts", `"type": "ack", "of": "say", "id": "n"`, `"type": "ignore", "ts": "t"`, `receives[1].ts: an ignore kind only counts`},
		{"http errors without match", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "errors": {"reason": "code"}},`, `roles[0].sends[0].http.errors.match`},
		{"http errors unknown field", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "errors": {"match": {"code": 401}, "status": 200}},`, `roles[0].sends[0].http.errors`},
		{"@json last in a path", `"ts": "t", `, `"ts": "t@json", `, `receives[0].ts: "t@json": @json follows a field whose value is a JSON string, and comes before the path inside it`},
		{"@json alone", `"ts": "t", `, `"ts": "@json.t", `, `receives[0].ts: "@json.t": @json follows a field`},
		{"sign header and query", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "sign": {"sign": "hmac_sha256", "key_env": "K", "header": "X-Sig", "query": "sig"}},`, `roles[0].sends[0].http.sign: give header (the signature in a request header) or query (in a query parameter), one of them`},
		{"sign neither header nor query", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "sign": {"sign": "hmac_sha256", "key_env": "K"}},`, `roles[0].sends[0].http.sign: give header`},
		{"sign string unknown variable", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "sign": {"sign": "hmac_sha256", "key_env": "K", "query": "sig", "string": "{method}\n{nope}"}},`, `roles[0].sends[0].http.sign.string`},
		{"unix_s in a message", `"n": "{id}"`, `"n": "{unix_s}"`, `roles[0].sends[0].message`},
		{"http sign unknown function", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "sign": {"sign": "md5", "key_env": "K", "header": "X-Sig"}},`, `roles[0].sends[0].http.sign.sign: "md5": the signing functions are: hmac_sha256`},
		{"http url variable", `"rate": 5,`, `"rate": 5, "http": {"url": "{url}/x"},`, `roles[0].sends[0].http.url: unknown variable {url}`},
		{"foreign host", `"{url}/ws"`, `"ws://collector.example:80/ws"`, `connect.url: "ws://collector.example:80/ws" must start with {url}`},
		{"host moved by userinfo", `"{url}/ws"`, `"{url}@collector.example/ws"`, `connect.url: "{url}@collector.example/ws": after {url} comes a path`},
		{"host moved by suffix", `"{url}/ws"`, `"{url}.collector.example"`, `connect.url: "{url}.collector.example": after {url}`},
		{"http foreign host", `"rate": 5,`, `"rate": 5, "http": {"url": "https://collector.example/x"},`, `roles[0].sends[0].http.url: "https://collector.example/x" must start with {http_url}`},
		{"http host moved", `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}:8080/x"},`, `roles[0].sends[0].http.url: "{http_url}:8080/x": after {http_url}`},
		{"websocket false without http", `{"name": "talker", "share": 0.25,`, `{"name": "talker", "share": 0.25, "websocket": false,`, `roles[0].sends[0]: role "talker" has no WebSocket`},
		{"rate_limited empty", `"receives": [`, `"rate_limited": {}, "receives": [`, `rate_limited: give match`},
		{"close code range", `"receives": [`, `"rate_limited": {"close_codes": [99]}, "receives": [`, `rate_limited.close_codes[0]: want a close code`},
		{"objective syntax", `"client_id"`, `"objective": "kinds.heard.latency_ns.p99 <= soon", "client_id"`, `objective: condition 1`},
		{"objective unknown kind", `"client_id"`, `"objective": "kinds.hread.latency_ns.p99 <= 100ms", "client_id"`, `objective: "kinds.hread.latency_ns.p99": this file has no kind "hread"`},
		{"objective type", `"client_id"`, `"objective": 100, "client_id"`, `objective: want a string, got a number`},
		{"invalid JSON", `"rooms": {"size": 4},`, `"rooms": {"size": 4},,`, `line 4: invalid JSON`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(base, c.old) {
				t.Fatalf("the base file has no %q", c.old)
			}
			_, err := Parse([]byte(strings.Replace(base, c.old, c.new, 1)))
			if err == nil {
				t.Fatalf("parsed; want error %q", c.want)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("error\n  %v\nwant prefix\n  %s", err, c.want)
			}
		})
	}
}

// TestValidate checks what needs the common knobs: the flag and file are
// named, a bad file is ErrBadFile (exit 2), a signing key must be set.
func TestValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cfg := func() *load.Config {
		return &load.Config{URL: "ws://127.0.0.1:1", Connections: 8, Payload: "constant", RecordSize: 16, Batch: 1}
	}
	good := write("good.json", base)
	p := &Params{File: good}
	if err := p.Validate(cfg(), nil); err != nil {
		t.Fatal(err)
	}
	if len(p.SHA256) != 64 {
		t.Fatalf("SHA256 = %q", p.SHA256)
	}
	bad := write("rooms.json", strings.Replace(base, `"share": 0.25`, `"share": 2`, 1))
	err := (&Params{File: bad}).Validate(cfg(), nil)
	if !errors.Is(err, ErrBadFile) || !strings.HasPrefix(err.Error(), "--scenario-file "+bad+": roles[0].share: 2: ") {
		t.Fatalf("err = %v", err)
	}
	if err := (&Params{}).Validate(cfg(), nil); err == nil || !strings.HasPrefix(err.Error(), "--scenario-file: required") {
		t.Fatalf("no file: %v", err)
	}
	c := cfg()
	c.Payload = "random"
	if err := (&Params{File: good}).Validate(c, nil); err == nil || !strings.HasPrefix(err.Error(), "--payload random") {
		t.Fatalf("random payload: %v", err)
	}
	c = cfg()
	c.Rate = 10
	if err := (&Params{File: good}).Validate(c, nil); err == nil || !strings.HasPrefix(err.Error(), "--rate 10") {
		t.Fatalf("rate: %v", err)
	}
	counted := write("counted.json", strings.Replace(base, `"share": 0.25`, `"count": 9`, 1))
	if err := (&Params{File: counted}).Validate(cfg(), nil); err == nil || !strings.HasPrefix(err.Error(), "--connections 8: the roles' counts need 9") {
		t.Fatalf("counts: %v", err)
	}
	signed := write("signed.json", strings.Replace(base, `"rate": 5,`, `"rate": 5, "http": {"url": "{http_url}/x", "sign": {"sign": "hmac_sha256", "key_env": "SCRIPT_TEST_KEY_UNSET", "header": "X-Sig"}},`, 1))
	err = (&Params{File: signed}).Validate(cfg(), nil)
	if !errors.Is(err, ErrBadFile) || !strings.Contains(err.Error(), "roles[0].sends[0].http.sign.key_env: environment variable SCRIPT_TEST_KEY_UNSET is not set") {
		t.Fatalf("unset key: %v", err)
	}
	t.Setenv("SCRIPT_TEST_KEY_UNSET", "s3cret")
	ps := &Params{File: signed}
	if err := ps.Validate(cfg(), nil); err != nil {
		t.Fatal(err)
	}
	if string(ps.keys["SCRIPT_TEST_KEY_UNSET"]) != "s3cret" {
		t.Fatal("key not read")
	}
	// --io: loop by default where the loops run, goroutines elsewhere.
	want := map[bool]string{true: IOLoop, false: IOGoroutines}[loopSupported]
	if p.IO != want {
		t.Errorf("default --io %q, want %q", p.IO, want)
	}
	if err := (&Params{File: good, IO: "threads"}).Validate(cfg(), nil); err == nil || err.Error() != `--io "threads": want loop or goroutines` {
		t.Errorf("bad --io: %v", err)
	}
	pg := &Params{File: good, IO: IOGoroutines}
	if err := pg.Validate(cfg(), func(f string) bool { return f == "io" }); err != nil || pg.IO != IOGoroutines {
		t.Errorf("--io goroutines: %v, %q", err, pg.IO)
	}
}

func TestAssignRoles(t *testing.T) {
	s, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	roles, err := assignRoles(s, 10)
	if err != nil {
		t.Fatal(err)
	}
	// 25% of 10 rounds to 3 talkers (0..2), the rest listen.
	if got := roles; len(got) != 10 || got[0] != 0 || got[2] != 0 || got[3] != 1 {
		t.Fatalf("roles = %v", got)
	}
	// Shares summing to 1: largest remainder, counts add up exactly.
	s2, err := Parse([]byte(strings.Replace(base, `{"name": "listener"}`, `{"name": "listener", "share": 0.75}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1, 3, 7, 10, 101} {
		r, err := assignRoles(s2, n)
		if err != nil || len(r) != n {
			t.Fatalf("n=%d: %v %v", n, r, err)
		}
	}
	// The rooms file: 10% editors, rooms of 10: one editor per room.
	rooms, err := ParseFile("../../../benchmark/scenarios/rooms.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{200, 1000, 3000} {
		r, err := assignRoles(rooms, n)
		if err != nil {
			t.Fatal(err)
		}
		nr := rooms.roomCount(n)
		editors := make([]int, nr)
		for i, role := range r {
			if rooms.Roles[role].Name == "editor" {
				editors[i%nr]++
			}
		}
		for room, e := range editors {
			if e != 1 {
				t.Fatalf("n=%d: room %d has %d editors", n, room, e)
			}
		}
	}
}

// TestRoomsFile: benchmark/scenarios/rooms.json parses into the kinds the
// rooms protocol has (presence is both the send and its coalesced relay).
func TestRoomsFile(t *testing.T) {
	s, err := ParseFile(roomsFile)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range s.kinds {
		exp := ""
		if k.hasExp {
			exp = "+expected"
		}
		names = append(names, k.name+":"+k.typ+exp)
	}
	want := "patch:send presence:relay op:relay+expected ack:ack+expected joined:ignore resync:ignore"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("kinds\n  %s\nwant\n  %s", got, want)
	}
	if s.RoomSize != 10 || s.Roles[0].Share != 0.1 || s.Roles[0].Sends[0].Rate != 2 || s.Roles[1].Sends[0].Rate != 20 {
		t.Fatalf("the seed's mix is not in the file: %+v", s)
	}
	if !strings.Contains(s.Objective, "kinds.op.latency_ns.p99 <= 100ms") {
		t.Fatalf("objective %q", s.Objective)
	}
	if s.RateLimited == nil || s.RateLimited.ID == nil || s.Errors == nil {
		t.Fatal("rate_limited/errors missing")
	}
	// One pass reads ts, from and v of an op.
	op := s.Receives[0]
	if strings.Join(op.top, ",") != "ts,from,v" {
		t.Fatalf("op fields %v", op.top)
	}
}

// TestDocExample: the example at the top of docs/scenarios.md is a valid
// file.
func TestDocExample(t *testing.T) {
	b, err := os.ReadFile("../../../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	const start = "## The format at a glance\n\n```json\n"
	i := strings.Index(doc, start)
	if i < 0 {
		t.Fatal("docs/scenarios.md lost its example")
	}
	ex := doc[i+len(start):]
	ex = ex[:strings.Index(ex, "```")]
	s, err := Parse([]byte(ex))
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	if len(s.Roles) != 2 || len(s.Receives) != 4 {
		t.Fatalf("example parsed to %d roles, %d receives", len(s.Roles), len(s.Receives))
	}
}

// A header may read a key from the environment ({env:NAME}): the file
// holds no secret, an unset variable is named, and no error quotes the
// value.
func TestHeaderFromEnv(t *testing.T) {
	file := strings.Replace(base, `"url": "{url}/ws",`, `"url": "{url}/ws", "headers": {"X-API-Key": "k-{env:CEILING_TEST_API_KEY}"},`, 1)
	if _, err := Parse([]byte(file)); err == nil || !strings.Contains(err.Error(), "connect.headers.X-API-Key: {env:CEILING_TEST_API_KEY}: CEILING_TEST_API_KEY is not set") {
		t.Fatalf("unset: %v", err)
	}
	t.Setenv("CEILING_TEST_API_KEY", "s3cr{t-value")
	s, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	var vs vars
	if got := string(s.Connect.Headers[0].value.Append(nil, &vs)); got != "k-s3cr{t-value" {
		t.Errorf("header = %q", got)
	}
	bad := strings.Replace(file, `"k-{env:CEILING_TEST_API_KEY}"`, `"{nope}-{env:CEILING_TEST_API_KEY}"`, 1)
	if _, err := Parse([]byte(bad)); err == nil || strings.Contains(err.Error(), "s3cr") {
		t.Errorf("a bad header's error: %v", err)
	}
}

// TestHostileFiles: a file over 1 MiB is refused before it is read
// whole, one nested past MaxDepth before it is walked, and a rate that
// sends nothing in any window (1e-300) is refused, each saying why.
func TestHostileFiles(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"name": "`+strings.Repeat("x", MaxFileBytes)+`"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ParseFile(big); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes (1 MiB)") {
		t.Errorf("a file over 1 MiB: %v", err)
	}
	deep := strings.Repeat(`{"a": `, MaxDepth) + "1" + strings.Repeat("}", MaxDepth)
	if d := depth([]byte(deep), MaxDepth); d != MaxDepth {
		t.Errorf("depth = %d, want %d", d, MaxDepth)
	}
	deeper := `{"description": "` + strings.Repeat(`{[`, 100) + `", "x": ` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "}"
	if _, err := Parse([]byte(deeper)); err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") {
		t.Errorf("a file nested %d deep: %v", MaxDepth+1, err)
	}
	slow := strings.Replace(base, `"rate": 5`, `"rate": 1e-300`, 1)
	if _, err := Parse([]byte(slow)); err == nil || !strings.Contains(err.Error(), "roles[0].sends[0].rate: 1e-300: want messages per second per connection in [0.001, 1e6]") {
		t.Errorf("rate 1e-300: %v", err)
	}
}

// TestEnvNames: a file's environment variables, sorted, once each.
func TestEnvNames(t *testing.T) {
	t.Setenv("B_KEY", "b-value")
	t.Setenv("A_KEY", "a-value")
	f := strings.Replace(base, `"connect": {"url": "{url}/ws",`, `"connect": {"url": "{url}/ws", "headers": {"X-B": "{env:B_KEY}", "X-A": "{env:A_KEY} {env:B_KEY}"},`, 1)
	s, err := Parse([]byte(f))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.EnvNames, ","); got != "A_KEY,B_KEY" {
		t.Errorf("EnvNames = %q, want A_KEY,B_KEY", got)
	}
}

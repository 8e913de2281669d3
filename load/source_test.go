package load

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSourceAddrs(t *testing.T) {
	tests := []struct {
		spec string
		auto bool
		want string // addresses joined by space
		err  string
	}{
		{"", true, "", ""},
		{"auto", true, "", ""},
		{"off", false, "", ""},
		{"3", false, "127.0.0.1 127.0.0.2 127.0.0.3", ""},
		{"127.0.0.1-127.0.0.4", false, "127.0.0.1 127.0.0.2 127.0.0.3 127.0.0.4", ""},
		{"127.0.0.255-127.0.1.1", false, "127.0.0.255 127.0.1.0 127.0.1.1", ""},
		{"10.0.0.1, 10.0.0.5-10.0.0.6", false, "10.0.0.1 10.0.0.5 10.0.0.6", ""},
		{"::1", false, "::1", ""},
		{"0", false, "", "--source-addrs 0: a count"},
		{"255", false, "", "--source-addrs 255: a count"},
		{"127.0.0.x", false, "", `--source-addrs "127.0.0.x"`},
		{"127.0.0.5-127.0.0.1", false, "", "not from a lower to a higher"},
		{"127.0.0.1-::2", false, "", "not from a lower to a higher"},
		{"10.0.0.0-10.2.0.0", false, "", "more than 65536"},
	}
	for _, tt := range tests {
		addrs, auto, err := ParseSourceAddrs(tt.spec)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err %v, want one containing %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.spec, err)
			continue
		}
		got := strings.Trim(fmt.Sprint(sourceStrings(addrs)), "[]")
		if got != tt.want || auto != tt.auto {
			t.Errorf("%q: %q auto=%v, want %q auto=%v", tt.spec, got, auto, tt.want, tt.auto)
		}
	}
}

// auto spreads only against loopback servers, and only when the
// connections per server exceed half the port range.
func TestSourceAddrsAuto(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		ports int
		want  int // addresses; 0: the kernel picks
	}{
		{"few connections", Config{URL: "ws://127.0.0.1:8080/echo", Connections: 10000}, 28232, 0},
		{"half the range", Config{URL: "ws://127.0.0.1:8080/echo", Connections: 14116}, 28232, 0},
		{"over half", Config{URL: "ws://127.0.0.1:8080/echo", Connections: 14117}, 28232, 2},
		{"60k", Config{URL: "ws://127.0.0.1:8080/echo", Connections: 60000}, 28232, 5},
		{"localhost", Config{URL: "ws://localhost:8080/echo", Connections: 300}, 100, 6},
		{"other loopback", Config{URL: "ws://127.1.2.3:8080/echo", Connections: 300}, 100, 6},
		{"remote", Config{URL: "ws://10.0.0.1:8080/echo", Connections: 300}, 100, 0},
		{"ipv6 loopback", Config{URL: "ws://[::1]:8080/echo", Connections: 300}, 100, 0},
		{"two servers share", Config{URL: "ws://127.0.0.1:1/", URLs: []string{"ws://127.0.0.1:1/", "ws://127.0.0.1:2/"}, Connections: 100}, 100, 0},
		{"one remote of two", Config{URL: "ws://127.0.0.1:1/", URLs: []string{"ws://127.0.0.1:1/", "ws://10.0.0.1:2/"}, Connections: 300}, 100, 0},
		{"off", Config{URL: "ws://127.0.0.1:8080/echo", Connections: 300, SourceAddrs: "off"}, 100, 0},
		{"given, remote", Config{URL: "ws://10.0.0.1:8080/echo", Connections: 1, SourceAddrs: "10.0.0.2-10.0.0.3"}, 100, 2},
	}
	for _, tt := range tests {
		addrs, note := SourceAddrs(&tt.cfg, tt.ports)
		if len(addrs) != tt.want {
			t.Errorf("%s: %d addresses %v (%s), want %d", tt.name, len(addrs), addrs, note, tt.want)
		}
		if (len(addrs) > 0) != (note != "") {
			t.Errorf("%s: note %q for %d addresses", tt.name, note, len(addrs))
		}
		if tt.want > 0 && tt.cfg.SourceAddrs == "" && addrs[0].String() != "127.0.0.1" {
			t.Errorf("%s: auto starts at %s, want 127.0.0.1", tt.name, addrs[0])
		}
	}
}

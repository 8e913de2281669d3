package probe

import (
	"flag"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in       string
		wantKind string
		wantErr  string
	}{
		{in: "tcp:127.0.0.1:8080", wantKind: TCP},
		{in: "tcp:[::1]:8080", wantKind: TCP},
		{in: "tcp:localhost:1", wantKind: TCP},
		{in: "http://127.0.0.1:8080/health", wantKind: HTTP},
		{in: "https://localhost/ready", wantKind: HTTP},
		{in: `log:listening on .*:\d+`, wantKind: Log},
		{in: "", wantErr: `readiness probe "": want tcp:HOST:PORT, http://URL or log:REGEX`},
		{in: "udp:1.2.3.4:5", wantErr: "want tcp:HOST:PORT"},
		{in: "tcp:8080", wantErr: `readiness probe "tcp:8080": address 8080: missing port`},
		{in: "tcp::8080", wantErr: "no host"},
		{in: "tcp:127.0.0.1:0", wantErr: `port "0" is not 1-65535`},
		{in: "tcp:127.0.0.1:http", wantErr: `port "http" is not 1-65535`},
		{in: "http://", wantErr: "no host in URL"},
		{in: "http://a b/", wantErr: "invalid character"},
		{in: "log:", wantErr: "empty regular expression"},
		{in: "log:(", wantErr: "missing closing )"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := Parse(tt.in)
			switch {
			case tt.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if got.Kind != tt.wantKind {
				t.Errorf("kind %q, want %q", got.Kind, tt.wantKind)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want the input back", got.String())
			}
		})
	}
}

func TestProbeFlag(t *testing.T) {
	var p Probe
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&p, "ready", "readiness probe")
	if err := fs.Parse([]string{"-ready", "tcp:127.0.0.1:9"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Probe{Kind: TCP, Addr: "127.0.0.1:9"}, p, cmp.Comparer(func(a, b *regexp.Regexp) bool { return a == b })); diff != "" {
		t.Error(diff)
	}
	if err := fs.Parse([]string{"-ready", "nope"}); err == nil || !strings.Contains(err.Error(), "-ready") {
		t.Errorf("err = %v", err)
	}
}

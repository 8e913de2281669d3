package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// RedactCommand is the harness's redactor (internal/redact): every flag
// whose name says secret, not only --secret.
func TestRedactCommand(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"load", "--secret", "s3", "--key", "k"}, []string{"load", "--secret", "REDACTED", "--key", "k"}},
		{[]string{"load", "-secret=s3"}, []string{"load", "-secret=REDACTED"}},
		{[]string{"load", "--secret=a=b"}, []string{"load", "--secret=REDACTED"}},
		{[]string{"load", "--secret"}, []string{"load", "--secret"}},
		{[]string{"load", "--url", "secret"}, []string{"load", "--url", "secret"}},
		{[]string{"load", "--token", "t0k", "--api-key=k3y"}, []string{"load", "--token", "REDACTED", "--api-key=REDACTED"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, RedactCommand(tt.in)); diff != "" {
			t.Errorf("RedactCommand(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedactCommand(t *testing.T) {
	tests := []struct{ in, want []string }{
		{[]string{"load", "--secret", "s3", "--key", "k"}, []string{"load", "--secret", "***", "--key", "k"}},
		{[]string{"load", "-secret=s3"}, []string{"load", "-secret=***"}},
		{[]string{"load", "--secret=a=b"}, []string{"load", "--secret=***"}},
		{[]string{"load", "--secret"}, []string{"load", "--secret"}},
		{[]string{"load", "--url", "secret"}, []string{"load", "--url", "secret"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, RedactCommand(tt.in)); diff != "" {
			t.Errorf("RedactCommand(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

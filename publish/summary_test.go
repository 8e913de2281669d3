package publish

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	t.Parallel()
	md, err := Summary(mustRead(t, "two_arm_real.json"), "ceiling sweep: <b>x</b>")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### ceiling sweep&#58; &lt;b&gt;x&lt;/b&gt;\n", "```mermaid", "cannot conclude", HiddenMarker(SummaryMarker)} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in\n%s", want, md)
		}
	}
	md, err = Summary(mustRead(t, "head_hostile.json"), "h")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(md, "<script>") {
		t.Errorf("hostile text unescaped in the summary:\n%s", md)
	}
}

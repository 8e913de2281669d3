package result

import "testing"

func TestEscapedWarning(t *testing.T) {
	if w := (Point{Index: 3}).EscapedWarning(); w != "" {
		t.Errorf("nothing escaped: %q", w)
	}
	p := Point{Index: 3, Escaped: []EscapedProcess{{Pid: 41, Command: "sleep"}, {Pid: 42, Command: "node"}}}
	want := "point 3: 2 process(es) escaped the supervisor and were killed after the point: 41 (sleep), 42 (node); they ran outside its tree (started through another process, or the supervisor died), and may have used the pinned CPUs"
	if w := p.EscapedWarning(); w != want {
		t.Errorf("%q\nwant %q", w, want)
	}
}

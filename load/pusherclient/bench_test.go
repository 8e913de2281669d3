package pusherclient

import "testing"

// BenchmarkScanEvent is the per-delivery cost of a fan-out subscriber:
// scan the envelope and pull the publish timestamp.
func BenchmarkScanEvent(b *testing.B) {
	msg := []byte(`{"event":"tick","channel":"ch-0","data":"{\"ts\":1732900000123456789,\"pad\":\"xxxxxxxxxxxxxxxx\"}"}`)
	b.ReportAllocs()
	for b.Loop() {
		_, _, d, _ := ScanEvent(msg)
		if _, ok := IntField(d, "ts"); !ok {
			b.Fatal("no ts")
		}
	}
}

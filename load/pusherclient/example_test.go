package pusherclient_test

import (
	"fmt"

	"github.com/ceiling-bench/ceiling/load/pusherclient"
)

// A subscriber's delivery, scanned without unescaping or allocating.
func ExampleScanEvent() {
	msg := []byte(`{"event":"tick","channel":"ch-0","data":"{\"ts\":1732900000123,\"n\":7}"}`)
	event, channel, data, ok := pusherclient.ScanEvent(msg)
	ts, _ := pusherclient.IntField(data, "ts")
	fmt.Printf("%s %s %v %d\n", event, channel, ok, ts)
	// Output: tick ch-0 true 1732900000123
}

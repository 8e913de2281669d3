package echo

import (
	"context"
	"testing"

	"github.com/ceiling-bench/ceiling/load"

	"github.com/ceiling-bench/ceiling/load/payload"
	"github.com/ceiling-bench/ceiling/load/wsconn"
)

// BenchmarkEchoBatch is one connection's closed-loop cycle (frame a batch,
// one write, batched read, record every reply) against the in-process raw
// echo server; ns/op is per batch of 10 and includes the server's share.
// Use it with -cpuprofile to see where the generator's user time goes.
func BenchmarkEchoBatch(b *testing.B) {
	url := startRawEchoServerTB(b)
	cfg := testConfig(url)
	cfg.Batch, cfg.RecordSize = 10, 64
	pool, _ := payload.New(payload.Constant, 1, 64, 100)
	e := newEcho(&cfg, cfg.Params.(*Params), pool)
	c, err := wsconn.Dial(context.Background(), url, wsconn.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	rec := load.NewRecorder(true, false)
	w := load.Window{Start: 0, End: 1 << 62, Drain: 1 << 62}
	buf := make([]byte, 0, 4096)
	next := 0
	expect := cfg.Batch * wsconn.ServerFrameSize(cfg.RecordSize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = e.frameBatch(c, buf, &next)
		t0 := load.Mono()
		if err := c.Write(buf); err != nil {
			b.Fatal(err)
		}
		c.ExpectBytes(expect)
		if !e.readBatch(context.Background(), c, t0, true, w, rec) {
			b.Fatal("read failed")
		}
	}
	b.ReportMetric(float64(b.N*cfg.Batch)/b.Elapsed().Seconds(), "msg/s")
}

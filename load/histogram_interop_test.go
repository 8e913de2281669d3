package load

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"io"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// foreignBoundary2048 is a histogram written by HdrHistogram Java and by
// HdrHistogram_c (byte-identical streams): (1, 2048, 3 significant
// figures) with one recordValue(2048), V2 compressed, base64.
const foreignBoundary2048 = "HISTFAAAACB4nJNpmSzMwMDAzAABMJoRQnEw2H+AsP7LMwEARZgDpQ=="

// inner returns the uncompressed V2 payload of a compressed encoding
// (after the 8-byte cookie and length header, zlib-inflated).
func inner(t *testing.T, b64 string) []byte {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) < 8 {
		t.Fatalf("%d bytes: no header", len(raw))
	}
	n := binary.BigEndian.Uint32(raw[4:8])
	zr, err := zlib.NewReader(bytes.NewReader(raw[8 : 8+n]))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The agents ship their histograms in this encoding (issue 13): a Java or
// C reader must read what hdrhistogram-go writes, and we must read what
// they write. Java and C are not on this machine, so the test holds
// hdrhistogram-go to their bytes: it decodes their stream to the value
// they recorded, and its own encoding of the same histogram carries the
// identical uncompressed payload (cookie, configuration, zigzag LEB128
// counts); only zlib's compressed bytes may differ, and any inflater
// reads those.
func TestHistogramEncodingMatchesJavaAndC(t *testing.T) {
	h, err := hdrhistogram.Decode([]byte(foreignBoundary2048))
	if err != nil {
		t.Fatalf("decode the Java/C stream: %v", err)
	}
	if h.LowestTrackableValue() != 1 || h.HighestTrackableValue() != 2048 || h.SignificantFigures() != 3 {
		t.Fatalf("configuration (%d, %d, %d), want (1, 2048, 3)", h.LowestTrackableValue(), h.HighestTrackableValue(), h.SignificantFigures())
	}
	if h.TotalCount() != 1 || !h.ValuesAreEquivalent(h.Max(), 2048) {
		t.Fatalf("decoded count %d max %d, want one value of 2048", h.TotalCount(), h.Max())
	}

	own := hdrhistogram.New(1, 2048, 3)
	if err := own.RecordValue(2048); err != nil {
		t.Fatal(err)
	}
	enc, err := own.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inner(t, string(enc)), inner(t, foreignBoundary2048); !bytes.Equal(got, want) {
		t.Fatalf("hdrhistogram-go's V2 payload differs from Java/C's:\n got %x\nwant %x", got, want)
	}
	// And the form the agents send (Histogram.Encode) round-trips.
	var lh Histogram
	lh.h = own
	e, err := lh.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(inner(t, e.Hdr), inner(t, foreignBoundary2048)) {
		t.Fatal("Histogram.Encode's payload differs from Java/C's")
	}
}

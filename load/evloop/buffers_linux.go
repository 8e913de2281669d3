package evloop

import "math/bits"

// Per-loop free lists of byte buffers by power-of-two size class: a
// connection holds a private buffer only while it has a partial frame
// pending, a fragmented message being reassembled or bytes the socket
// refused, and gives it back to its loop as soon as that ends. Only the
// loop's goroutine touches them, so they take no lock (unlike a
// sync.Pool), and in the steady state they allocate nothing.
const (
	minClass = 9  // 512 B
	maxClass = 24 // 16 MiB; larger buffers are left to the GC
)

type freeLists [maxClass + 1][][]byte

// get returns an empty buffer with room for at least n bytes.
func (f *freeLists) get(n int) []byte {
	k := max(bits.Len(uint(max(n, 1)-1)), minClass)
	if k > maxClass {
		return make([]byte, 0, n)
	}
	if l := f[k]; len(l) > 0 {
		b := l[len(l)-1]
		l[len(l)-1] = nil
		f[k] = l[:len(l)-1]
		return b[:0]
	}
	return make([]byte, 0, 1<<k)
}

// put gives b back for reuse; it serves the class its capacity covers.
func (f *freeLists) put(b []byte) {
	k := bits.Len(uint(cap(b))) - 1
	if k < minClass || k > maxClass {
		return
	}
	f[k] = append(f[k], b[:0])
}

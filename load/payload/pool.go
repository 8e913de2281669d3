package payload

import (
	"bytes"
	"fmt"
)

// Modes accepted by New.
const (
	Constant = "constant"
	JSON     = "json"
	Random   = "random"
)

// Modes lists every mode, in the order the flag help shows them.
var Modes = []string{Constant, JSON, Random}

// Pool sizing (see the package comment).
const (
	PoolTargetBytes = 8 << 20
	PoolMaxValues   = 65536
)

// PoolSize is the number of values a pool holds for records of size bytes
// sent by conns connections in batches of batch values.
func PoolSize(size, batch, conns int) int {
	n := (PoolTargetBytes + size - 1) / size
	if n > PoolMaxValues {
		n = PoolMaxValues
	}
	if min := batch * conns; n < min {
		n = min
	}
	if n < 1 {
		n = 1
	}
	return n
}

// Pool is an immutable set of equally sized values in one backing array.
type Pool struct {
	mode string
	size int
	n    int
	data []byte // the values back to back; the constant mode's one value
	one  bool   // constant: every index is the one value in data
}

// Validate reports whether (mode, size) can make values; errors name the
// flags the CLI maps them to.
func Validate(mode string, size int) error {
	switch mode {
	case Constant, Random:
	case JSON:
		if size < MinJSONSize {
			return fmt.Errorf("--record-size %d is too small for --payload json: the document needs at least %d bytes", size, MinJSONSize)
		}
	default:
		return fmt.Errorf("--payload %q: want one of constant, json, random", mode)
	}
	if size < 1 {
		return fmt.Errorf("--record-size %d: must be at least 1", size)
	}
	return nil
}

// New generates count values of size bytes. The seed is ignored by the
// constant mode.
func New(mode string, seed uint32, size, count int) (*Pool, error) {
	if err := Validate(mode, size); err != nil {
		return nil, err
	}
	if count < 1 {
		return nil, fmt.Errorf("payload pool: count %d must be at least 1", count)
	}
	if mode == Constant { // equal values: one copy serves every index
		return &Pool{mode: mode, size: size, n: count, data: bytes.Repeat([]byte{'x'}, size), one: true}, nil
	}
	p := &Pool{mode: mode, size: size, n: count, data: make([]byte, 0, size*count)}
	r := &splitmix64{state: uint64(seed)}
	for i := 0; i < count; i++ {
		switch mode {
		case Random:
			p.data = appendRandom(p.data, r, size)
		case JSON:
			p.data = appendJSON(p.data, r, i, size)
		}
	}
	return p, nil
}

func appendRandom(b []byte, r *splitmix64, size int) []byte {
	for size > 0 {
		v := r.next()
		for k := 0; k < 8 && size > 0; k++ {
			b = append(b, byte(v))
			v >>= 8
			size--
		}
	}
	return b
}

// Len is the number of values.
func (p *Pool) Len() int { return p.n }

// Size is the bytes per value.
func (p *Pool) Size() int { return p.size }

// Mode is the mode the pool was built with.
func (p *Pool) Mode() string { return p.mode }

// Binary reports whether values must go in binary frames (random bytes are
// not UTF-8).
func (p *Pool) Binary() bool { return p.mode == Random }

// Value returns value i mod Len, a slice of the shared backing array: do
// not modify it.
func (p *Pool) Value(i int) []byte {
	if p.one {
		return p.data[:p.size:p.size]
	}
	if uint(i) >= uint(p.n) { // callers walking the pool pass i < Len: no division per value
		i %= p.n
	}
	return p.data[i*p.size : (i+1)*p.size : (i+1)*p.size]
}

// Start is where connection conn begins: a batch of its own, so no two
// connections start on the same values.
func (p *Pool) Start(conn, batch int) int { return (conn * batch) % p.n }

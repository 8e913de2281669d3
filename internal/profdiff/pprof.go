package profdiff

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
)

// MaxPprof bounds a pprof profile, decompressed.
const MaxPprof = 256 << 20

// ParsePprof reads a CPU profile in pprof's format (profile.proto,
// gzipped or not), as Go's /debug/pprof/profile serves it, into a
// Profile: each sample's locations leaf first, an inlined call's frames
// in their order (the inlined function first), the samples from the
// "samples" value and the nanoseconds from the one whose unit is
// "nanoseconds" (Go's "cpu"). A location without a function name counts
// as "[unknown]", unsymbolised when it is the leaf.
func ParsePprof(data []byte) (*Profile, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("pprof: %w", err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, MaxPprof+1)); err != nil {
			return nil, fmt.Errorf("pprof: %w", err)
		}
		if len(data) > MaxPprof {
			return nil, fmt.Errorf("pprof: larger than %d bytes decompressed", MaxPprof)
		}
	}
	var (
		types     [][2]int64 // sample_type: (type, unit) string indexes
		samples   [][2][]uint64
		locations = map[uint64][]uint64{} // id -> function ids, innermost first
		functions = map[uint64]int64{}    // id -> name string index
		strs      []string
	)
	err := fields(data, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1: // sample_type
			var vt [2]int64
			err := fields(v, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
				if num == 1 || num == 2 {
					vt[num-1] = int64(n)
				}
				return nil
			})
			types = append(types, vt)
			return err
		case 2: // sample
			var s [2][]uint64
			err := fields(v, func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error {
				if num != 1 && num != 2 {
					return nil
				}
				if typ == protowire.BytesType { // packed
					for len(v) > 0 {
						x, m := protowire.ConsumeVarint(v)
						if m < 0 {
							return protowire.ParseError(m)
						}
						s[num-1] = append(s[num-1], x)
						v = v[m:]
					}
					return nil
				}
				s[num-1] = append(s[num-1], n)
				return nil
			})
			samples = append(samples, s)
			return err
		case 4: // location
			var id uint64
			var fns []uint64
			err := fields(v, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
				switch num {
				case 1:
					id = n
				case 4: // line
					return fields(v, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
						if num == 1 {
							fns = append(fns, n)
						}
						return nil
					})
				}
				return nil
			})
			locations[id] = fns
			return err
		case 5: // function
			var id uint64
			var name int64
			err := fields(v, func(num protowire.Number, _ protowire.Type, _ []byte, n uint64) error {
				switch num {
				case 1:
					id = n
				case 2:
					name = int64(n)
				}
				return nil
			})
			functions[id] = name
			return err
		case 6: // string_table
			strs = append(strs, string(v))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	str := func(i int64) string {
		if i < 0 || i >= int64(len(strs)) {
			return ""
		}
		return strs[i]
	}
	countAt, nsAt := -1, -1
	for i, t := range types {
		switch {
		case str(t[0]) == "samples":
			countAt = i
		case str(t[1]) == "nanoseconds":
			nsAt = i
		}
	}
	if nsAt < 0 {
		return nil, errors.New("pprof: no sample value in nanoseconds (not a CPU profile)")
	}
	p := NewProfile()
	for _, s := range samples {
		val := func(i int) int64 {
			if i < 0 || i >= len(s[1]) {
				return 0
			}
			return int64(s[1][i])
		}
		w := Weight{Samples: val(countAt), Ns: val(nsAt)}
		if countAt < 0 {
			w.Samples = 1
		}
		if w.Samples <= 0 || w.Ns < 0 {
			continue
		}
		var leaf []string
		unsym := false
		for i, loc := range s[0] {
			fns := locations[loc]
			if len(fns) == 0 {
				leaf = append(leaf, Unknown)
				unsym = unsym || i == 0
				continue
			}
			for j, fn := range fns {
				name := clean(str(functions[fn]))
				if name == "" {
					name = Unknown
					unsym = unsym || i == 0 && j == 0
				}
				leaf = append(leaf, name)
			}
		}
		frames := make([]string, len(leaf))
		for i, f := range leaf {
			frames[len(leaf)-1-i] = f
		}
		p.Add(frames, w, unsym)
	}
	return p, nil
}

// fields calls f for each field of the message in b: its number, type,
// bytes (length-delimited) or value (varint, fixed).
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, n uint64) error) error {
	for len(b) > 0 {
		num, typ, m := protowire.ConsumeTag(b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
		var v []byte
		var n uint64
		switch typ {
		case protowire.VarintType:
			n, m = protowire.ConsumeVarint(b)
		case protowire.Fixed64Type:
			n, m = protowire.ConsumeFixed64(b)
		case protowire.Fixed32Type:
			var x uint32
			x, m = protowire.ConsumeFixed32(b)
			n = uint64(x)
		case protowire.BytesType:
			v, m = protowire.ConsumeBytes(b)
		default:
			m = protowire.ConsumeFieldValue(num, typ, b)
		}
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
		if err := f(num, typ, v, n); err != nil {
			return err
		}
	}
	return nil
}

package payload

// splitmix64 is the PRNG behind every seeded value. It is tiny, has a
// published reference implementation (Steele, Lea, Flood 2014; the one
// java.util.SplittableRandom uses), and its output depends only on the
// seed, so other generators can reproduce our bytes.
type splitmix64 struct{ state uint64 }

func (s *splitmix64) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a value in [0, n) for small n; the modulo bias is
// irrelevant for payload bytes and keeps the stream simple to reproduce.
func (s *splitmix64) intn(n int) int { return int(s.next() % uint64(n)) }

package agents

import (
	"fmt"
	"math/big"
)

// Segment is agent i's share of a point of conns connections at rate ops/s
// (0: closed loop) split over n agents: c = floor(conns(i+1)/n) -
// floor(conns*i/n), r = rate*c/conns. The c of i = 0..n-1 sum to conns
// exactly; every connection gets the same rate.
func Segment(conns int, rate float64, n, i int) (c int, r float64) {
	if n <= 0 || i < 0 || i >= n || conns < 0 {
		panic(fmt.Sprintf("agents.Segment(%d, %v, %d, %d): out of range", conns, rate, n, i))
	}
	// In big integers: C*(i+1) overflows int64 for no realistic C, but
	// this costs nothing and is exact for any.
	lo := new(big.Int).Div(new(big.Int).Mul(big.NewInt(int64(conns)), big.NewInt(int64(i))), big.NewInt(int64(n)))
	hi := new(big.Int).Div(new(big.Int).Mul(big.NewInt(int64(conns)), big.NewInt(int64(i+1))), big.NewInt(int64(n)))
	c = int(hi.Int64() - lo.Int64())
	if conns > 0 {
		r = rate * float64(c) / float64(conns)
	}
	return c, r
}

// Active is how many agents a point of conns connections runs on when n
// are asked for: n, or conns when there are fewer connections than agents
// (an agent with no connection would measure nothing).
func Active(n, conns int) int {
	return max(1, min(n, conns))
}

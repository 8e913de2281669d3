package refserver

import "sync"

// byteBudget bounds the bytes held by REST bodies in flight, over every
// request at once. A request reserves what its body may take before
// reading it and gives it back when it is done; a request that does not
// fit is refused (503) rather than queued, so a flood of large posts
// costs the server at most the budget, never the sum of the posts.
type byteBudget struct {
	mu    sync.Mutex
	limit int64
	used  int64
}

// take reserves n bytes and reports whether they fit.
func (b *byteBudget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.limit-b.used {
		return false
	}
	b.used += n
	return true
}

// give returns n bytes taken earlier.
func (b *byteBudget) give(n int64) {
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
}

// inUse is what is reserved now.
func (b *byteBudget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

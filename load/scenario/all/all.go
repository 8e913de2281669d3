// Package all registers every scenario that ships with ceiling: import it
// for its side effect. Adding a scenario is its package under
// load/scenario and one line here.
package all

import (
	_ "github.com/ceiling-bench/ceiling/load/scenario/connections"
	_ "github.com/ceiling-bench/ceiling/load/scenario/echo"
	_ "github.com/ceiling-bench/ceiling/load/scenario/fanout"
	_ "github.com/ceiling-bench/ceiling/load/scenario/nats"
	_ "github.com/ceiling-bench/ceiling/load/scenario/script"
)

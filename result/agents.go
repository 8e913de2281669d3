package result

import "github.com/ceiling-bench/ceiling/internal/wire"

// AgentReport is one agent's part of a point, as the point lists it
// (curve[].agents); defined in internal/wire, where the agent's own result
// travels with it (wire.Agent).
type AgentReport = wire.AgentReport

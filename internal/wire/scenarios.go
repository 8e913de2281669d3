package wire

import (
	"slices"
	"sync"
)

// The names of the scenarios this binary's generator registered
// (load.Register adds each, at init): the vocabulary of --scenario and
// summary.scenario, which the knobs check SCENARIO against and list in
// their help without linking the generator's registry (load), whose
// definitions carry the drivers.
var scenarios struct {
	sync.RWMutex
	names []string // sorted
}

// AddScenario records a registered scenario's name; load.Register, which
// refuses a name registered twice, is its one caller.
func AddScenario(name string) {
	scenarios.Lock()
	defer scenarios.Unlock()
	if i, found := slices.BinarySearch(scenarios.names, name); !found {
		scenarios.names = slices.Insert(scenarios.names, i, name)
	}
}

// ScenarioNames lists the registered names, sorted.
func ScenarioNames() []string {
	scenarios.RLock()
	defer scenarios.RUnlock()
	return slices.Clone(scenarios.names)
}

// IsScenario reports whether name was registered.
func IsScenario(name string) bool {
	scenarios.RLock()
	defer scenarios.RUnlock()
	_, found := slices.BinarySearch(scenarios.names, name)
	return found
}

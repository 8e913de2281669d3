package fault

import (
	"net/url"
	"slices"
	"strings"

	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/load"
)

// Cluster is a target as one point booted it: which of its servers
// serves which of the scenario's URLs.
type Cluster struct {
	Target   target.Spec
	Scenario string
	Booted   []target.Server // the servers booted, in order
}

// URLs are the target block's URLs, unexpanded: the one, or a cluster's
// several (load.MultiURLBlock).
func (c Cluster) URLs() []string {
	blk, err := c.Target.Block(c.Scenario)
	if err != nil || c.Target.URL != "" {
		return nil // none, or the sweep's --url replaced them
	}
	if m, ok := blk.(load.MultiURLBlock); ok {
		return m.URLs()
	}
	return []string{blk.URL()}
}

// Owners maps each of the scenario's n URLs (in the target block's
// order) to the booted server that names its port ({portN}, {port},
// {addr}) in its ready probe, command or env, preferring its ready probe;
// -1 where none or several do.
func (c Cluster) Owners(n int) []int {
	out := make([]int, n)
	urls := c.URLs()
	for k := range out {
		out[k] = -1
		if k >= len(urls) {
			continue
		}
		ports := target.PortsNamed(urls[k])
		if len(ports) != 1 {
			continue
		}
		var byReady, byAny []int
		for i, s := range c.Booted {
			all := strings.Join(s.Command, " ")
			for _, v := range s.Env {
				all += " " + v
			}
			switch {
			case slices.Contains(target.PortsNamed(s.Ready), ports[0]):
				byReady = append(byReady, i)
			case slices.Contains(target.PortsNamed(all), ports[0]):
				byAny = append(byAny, i)
			}
		}
		switch {
		case len(byReady) == 1:
			out[k] = byReady[0]
		case len(byReady) == 0 && len(byAny) == 1:
			out[k] = byAny[0]
		}
	}
	return out
}

// Served is, for each booted server, the scenario URL it serves by
// Owners, expanded with addr; "" for none.
func (c Cluster) Served(addr target.Addr) []string {
	out := make([]string, len(c.Booted))
	urls := c.URLs()
	for k, i := range c.Owners(len(urls)) {
		if i >= 0 {
			out[i] = target.Expand(urls[k], addr)
		}
	}
	return out
}

// NameServers says which booted server each host:port of text is, by the
// target's names ("127.0.0.1:4001 is node-a"), for those that text
// names: a failure written by the generator knows the servers by their
// URLs only, and a reader knows them by their names. "" when text names
// none, and for a target of one server: there is no other to tell it from.
func (c Cluster) NameServers(text string, addr target.Addr) string {
	if len(c.Booted) < 2 {
		return ""
	}
	var names []string
	for i, u := range c.Served(addr) {
		if u == "" {
			continue
		}
		host := hostPort(u)
		if host != "" && strings.Contains(text, host) {
			names = append(names, host+" is "+c.Booted[i].Name)
		}
	}
	return strings.Join(names, ", ")
}

// hostPort is the host:port of a URL ("ws://127.0.0.1:4001/app" ->
// "127.0.0.1:4001"), "" when it names no port.
func hostPort(u string) string {
	pu, err := url.Parse(u)
	if err != nil || pu.Port() == "" {
		return ""
	}
	return pu.Host
}

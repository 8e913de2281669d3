package knob

import (
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/ceiling-bench/ceiling/internal/agenttoken"
)

// agentKnobs are the generator agents' knobs (AGENTS, docs/agents.md),
// after sweepKnobs in the table.
var agentKnobs = []Knob{
	{
		Env: "AGENTS", Flag: "agents", Arg: "N", Default: "`0` (one generator)",
		Help:  "run each point through N `ceiling agent` processes (pinned like the generator) started on a common window by the harness's coordinator, their histograms merged exactly; every point lists its agents (`curve[].agents`; docs/agents.md)",
		Parse: intParse(func(o *Options) *int { return &o.Agents }),
		Check: func(o *Options) error {
			switch {
			case o.Agents < 0 || o.Agents > MaxAgents:
				return fmt.Errorf("%d agents, want 0 (one generator) to %d", o.Agents, MaxAgents)
			case o.Agents > 0 && o.Generator != "" && !ceilingLoad(o.Generator):
				return fmt.Errorf("agents run `ceiling agent`: GENERATOR must be unset or `PATH/ceiling load [flags]`, not %q", o.Generator)
			case o.Agents < 1 && o.AgentsListen != "":
				return fmt.Errorf("AGENTS_LISTEN needs AGENTS=N (N >= 1): how many remote agents to wait for")
			case o.Agents > 0 && o.Drop:
				return fmt.Errorf("DROP is not supported with agents yet (each would drop its own connections at its own time)")
			}
			return nil
		},
		Get: func(o *Options) string { return strconv.Itoa(o.Agents) },
	},
	{
		Env: "AGENTS_LISTEN", Flag: "agents-listen", Arg: "HOST:PORT", Default: "unset (the harness starts the agents)",
		Help:  "with AGENTS=N, start no agents: listen here for N remote `ceiling agent --coordinator HOST:PORT` for the whole sweep, admitting only agents that prove AGENTS_TOKEN; the server binds HOST (`{host}`) unless HOST is empty or 0.0.0.0 (docs/agents.md)",
		Parse: stringParse(func(o *Options) *string { return &o.AgentsListen }),
		Check: func(o *Options) error {
			if o.AgentsListen == "" {
				return nil
			}
			if _, _, err := net.SplitHostPort(o.AgentsListen); err != nil {
				return fmt.Errorf("%q: %v", o.AgentsListen, err)
			}
			return nil
		},
		Get: func(o *Options) string { return o.AgentsListen },
	},
	{
		Env: "AGENTS_TOKEN", Arg: "TOKEN", Default: "unset",
		Help: "with AGENTS_LISTEN, the token every agent must prove (a mutual HMAC challenge; it never crosses the wire): at least 16 bytes and 128 bits of estimated entropy, e.g. from `ceiling agent --new-token`; agents read it from their own `AGENTS_TOKEN` or `--token-file` (docs/agents.md, \"Authentication\"). The harness's own agents get a fresh one per point",
		Parse: func(o *Options, _, v string) error {
			t, err := agenttoken.Check("the value", v)
			if err == nil {
				o.AgentsToken = Secret(t)
			}
			return err
		},
		Get: func(o *Options) string {
			if o.AgentsToken == "" {
				return ""
			}
			return "[token]" // never the token
		},
	},
	{
		Env: "AGENTS_TOKEN_FILE", Flag: "agents-token-file", Arg: "FILE", Default: "unset",
		Help:  "AGENTS_TOKEN read from FILE instead (mode 600 or stricter: a file other users may read is refused)",
		Parse: stringParse(func(o *Options) *string { return &o.AgentsTokenFile }),
		Get:   func(o *Options) string { return o.AgentsTokenFile },
	},
	{
		Env: "AGENTS_TLS_CERT", Flag: "agents-tls-cert", Arg: "FILE", Default: "unset: no TLS",
		Help:  "with AGENTS_LISTEN, mutual TLS around the token's proof: the coordinator's certificate (PEM), for the address the agents dial; with AGENTS_TLS_KEY and AGENTS_TLS_CA, all three or none (docs/agents.md, \"Mutual TLS\")",
		Parse: stringParse(func(o *Options) *string { return &o.AgentsTLSCert }),
		Get:   func(o *Options) string { return o.AgentsTLSCert },
	},
	{
		Env: "AGENTS_TLS_KEY", Flag: "agents-tls-key", Arg: "FILE", Default: "unset",
		Help:  "the private key (PEM) of AGENTS_TLS_CERT",
		Parse: stringParse(func(o *Options) *string { return &o.AgentsTLSKey }),
		Get:   func(o *Options) string { return o.AgentsTLSKey },
	},
	{
		Env: "AGENTS_TLS_CA", Flag: "agents-tls-ca", Arg: "FILE", Default: "unset",
		Help:  "the CA (PEM) that signed the agents' certificates: an agent without one is refused before it can say anything",
		Parse: stringParse(func(o *Options) *string { return &o.AgentsTLSCA }),
		Get:   func(o *Options) string { return o.AgentsTLSCA },
	},
	durationKnob("AGENTS_JOIN_TIMEOUT", "agents-join-timeout", "`60s` (with AGENTS_LISTEN: `2m`)", "how long a point waits for every agent to join and be ready; the point fails naming the missing agents",
		func(o *Options) *time.Duration { return &o.AgentsJoinTimeout }, false),
	func() Knob {
		k := boolKnob("AGENTS_NETNS", "agents-netns", "as root, AGENTS=N runs in a private network namespace: the server on a bridge, each agent in a namespace of its own joined by a veth pair with several source addresses (docs/agents.md); `0`, or not root: processes on the host's loopback, said in the result's warnings",
			func(o *Options) *bool { return &o.AgentsNetns })
		k.Default = "`1`"
		return k
	}(),
	{
		Env: "AGENTS_PORT_RANGE", Flag: "agents-port-range", Arg: "LO-HI", Default: "the kernel's",
		Help:  "each agent namespace's `ip_local_port_range` (a test knob: a few hundred connections then take several source addresses)",
		Parse: stringParse(func(o *Options) *string { return &o.AgentsPortRange }),
		Check: func(o *Options) error {
			if o.AgentsPortRange == "" {
				return nil
			}
			if _, _, err := ParsePortRange(o.AgentsPortRange); err != nil {
				return err
			}
			return nil
		},
		Get: func(o *Options) string { return o.AgentsPortRange },
	},
}

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/internal/agenttoken"
	"github.com/ceiling-bench/ceiling/load"
)

const agentUsage = `usage: ceiling agent --coordinator HOST:PORT [--index I] [--token-file FILE]
                     [--tls-cert F --tls-key F --tls-ca F] [flags]

Join a coordinator (the harness with AGENTS=N or AGENTS_LISTEN, or a pod)
and run this agent's segment of each point on the common window, point
after point, until the coordinator says the sweep is done (exit 0). A
connection lost between points is redialed (--rejoin). The agent dials
out: it needs no inbound port. The points' load flags come from the
coordinator (docs/agents.md).

The agent and the coordinator first prove to each other that they hold
the same token (--token-file, or the variable AGENTS_TOKEN; make one with
--new-token): the agent
says nothing more to a coordinator that cannot, and exits 1. With
--tls-*, that proof runs inside mutual TLS: each side's certificate must
be signed by the CA the other trusts.

flags:
`

func runAgent(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("ceiling agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	coord := fs.String("coordinator", "", "`host:port` of the coordinator to dial")
	index := fs.Int("index", -1, "this agent's segment, 0..N-1 (default: $JOB_COMPLETION_INDEX)")
	dial := fs.Duration("dial-timeout", 30*time.Second, "how long to keep dialing the coordinator, and the bound on each step before the load")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	var tlsFiles agents.TLSFiles
	fs.StringVar(&tlsFiles.Cert, "tls-cert", "", "mutual TLS (the coordinator's AGENTS_TLS_*): this agent's certificate, PEM `FILE`; with --tls-key and --tls-ca, all three or none")
	fs.StringVar(&tlsFiles.Key, "tls-key", "", "the private key of --tls-cert, PEM `FILE`")
	fs.StringVar(&tlsFiles.CA, "tls-ca", "", "the CA that signed the coordinator's certificate, PEM `FILE`: the agent talks to no other")
	tokenFile := fs.String("token-file", "", "the coordinator's token (AGENTS_TOKEN_FILE there), from `FILE` (mode 600 or stricter); default: the variable AGENTS_TOKEN")
	newToken := fs.Bool("new-token", false, "print a fresh random token (32 bytes, URL-safe base64) for AGENTS_TOKEN or a token file, and exit")
	rejoin := fs.Int("rejoin", 5, "times in a row to redial the coordinator when the connection ends between points (each bounded by --dial-timeout); 0: exit on the first. A connection that ends before the coordinator's challenge does not count: it is redialed with a doubling wait for up to --dial-timeout")
	// Test only: shifts this agent's wall clock, to show the measured
	// offset keeps the common window lined up. Not in the usage.
	skew := fs.Duration("wall-skew", 0, "")
	fs.Usage = func() {
		fmt.Fprint(stderr, agentUsage)
		shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
		fs.VisitAll(func(f *flag.Flag) {
			if f.Name != "wall-skew" {
				shown.Var(f.Value, f.Name, f.Usage)
			}
		})
		printFlags(shown, stderr)
	}
	if done, err := parseOnlyFlags(fs, args); done {
		return err
	}
	if *newToken {
		_, err := fmt.Fprintln(stdout, agenttoken.New())
		return err
	}
	if *coord == "" {
		return usagef("ceiling agent: --coordinator is required")
	}
	if *rejoin < 0 {
		return usagef("ceiling agent: --rejoin: %d is negative", *rejoin)
	}
	if *dial <= 0 {
		return usagef("ceiling agent: --dial-timeout: %v is not positive", *dial)
	}
	idx := *index
	if idx < 0 {
		n, ok, err := agents.IndexFromEnv(os.Getenv)
		if err != nil {
			return usageError{err}
		}
		if !ok {
			return usagef("ceiling agent: --index (or JOB_COMPLETION_INDEX) is required")
		}
		idx = n
	}
	token, err := agentToken(*tokenFile, os.Getenv)
	if err != nil {
		return usageError{err}
	}
	var tlsConf *tls.Config
	if !tlsFiles.IsZero() {
		if tlsConf, err = tlsFiles.ClientConfig(*coord); err != nil {
			var fe *agents.TLSFileError
			if errors.As(err, &fe) {
				return usagef("ceiling agent: --tls-%s: %v", fe.Which, err)
			}
			return usagef("ceiling agent: %v", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logw := stderr
	if *quiet {
		logw = io.Discard
	}
	err = agents.RunAgent(ctx, agents.AgentConfig{
		Coordinator: *coord, Index: idx, Token: token, TLS: tlsConf, WallSkew: *skew, DialTimeout: *dial, Rejoin: *rejoin,
		Version: version, Log: logw,
		Parse: func(args []string) (load.Config, error) {
			o, _, err := parseLoad(args, io.Discard)
			return o.cfg, err
		},
	})
	var bad *agents.BadArgsError
	if errors.As(err, &bad) {
		return usageError{err}
	}
	return err
}

// agentToken is the agent's token: --token-file's, else AGENTS_TOKEN's.
func agentToken(file string, getenv func(string) string) (agents.Token, error) {
	if file != "" {
		t, err := agents.ReadTokenFile(file)
		if err != nil {
			return t, fmt.Errorf("ceiling agent: --token-file: %w", err)
		}
		return t, nil
	}
	v := getenv(agents.TokenEnv)
	if v == "" {
		return agents.Token{}, fmt.Errorf("ceiling agent: no token: give --token-file FILE or set %s to the coordinator's token (docs/agents.md, \"Authentication\")", agents.TokenEnv)
	}
	t, err := agents.ParseToken(agents.TokenEnv, v)
	if err != nil {
		return t, fmt.Errorf("ceiling agent: %w", err)
	}
	return t, nil
}

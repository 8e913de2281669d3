// Command ceiling-k8s puts ceiling's generator agents on a Kubernetes
// cluster: render, apply or delete the objects of deploy/k8s
// (deploy/k8s/kube; docs/k8s.md). `ceiling k8s ARGS` runs it.
//
// It is a binary of its own, not a subcommand of ceiling, because client-go
// and the API types are heavy: linked into ceiling they tripled its size
// and every ceiling process's resident memory at start (14 MB to 43 MB,
// 8 ms to 14 ms to start), and the harness starts a `ceiling load` or
// `ceiling agent` process for every point, whose memory it reports.
//
// main only calls run, like ceiling's: run(args, stdout, stderr) error, bad
// input exit 2 naming the flag.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ceiling-bench/ceiling/deploy/k8s/kube"
	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/internal/flaghelp"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling k8s:", err)
		os.Exit(exitCode(err))
	}
}

// badInput marks bad input (exit 2, before anything connects); the message
// names the flag.
type badInput struct{ error }

func (e badInput) Unwrap() error { return e.error }

func badf(format string, args ...any) error { return badInput{fmt.Errorf(format, args...)} }

// exitCode: 2 for bad input, 130 after ^C or SIGTERM, else 1.
func exitCode(err error) int {
	var b badInput
	switch {
	case errors.As(err, &b):
		return 2
	case errors.Is(err, context.Canceled):
		return 130
	}
	return 1
}

const k8sUsage = `usage: ceiling k8s render|apply|delete [flags]

The generator agents on a Kubernetes cluster (docs/k8s.md): an Indexed Job
of N agents; the coordinator pod running 'ceiling sweep' with AGENTS=N and
AGENTS_LISTEN, and the server under test's pod (refserver), each behind a
headless Service; the target file as a ConfigMap; a NetworkPolicy that
admits only the agents to the coordinator; and, for apply, a Secret with
the agents' token (AGENTS_TOKEN, or a fresh one).

  render  print the manifests for these flags (deploy/k8s holds the defaults)
  apply   create them, wait until the server, the coordinator and N agents
          run, wait for the sweep to end, print the coordinator's log,
          delete them (also on ^C or failure; --keep leaves them after a
          clean run)
  delete  delete them (propagation Background)

flags:
`

// newKubeClient is the cluster client for --kubeconfig and --context, and
// the kubeconfig's namespace; tests replace it.
var newKubeClient = func(kubeconfig, kubeContext string) (kubernetes.Interface, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", err
	}
	ns, _, err := cc.Namespace()
	if err != nil {
		return nil, "", err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	return cs, ns, err
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, k8sUsage)
		return badf("ceiling k8s: say render, apply or delete")
	}
	verb := args[0]
	switch verb {
	case "render", "apply", "delete":
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, k8sUsage)
		return nil
	default:
		fmt.Fprint(stderr, k8sUsage)
		return badf("ceiling k8s: unknown subcommand %q (want render, apply or delete)", verb)
	}
	fs := flag.NewFlagSet("ceiling k8s "+verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, k8sUsage); flaghelp.PrintFlags(fs, stderr) }
	p := kube.Defaults()
	fs.StringVar(&p.Namespace, "namespace", "", "namespace (default: the kubeconfig's; none in render's output)")
	fs.StringVar(&p.Image, "image", p.Image, "the ceiling `image` (deploy/k8s/Dockerfile)")
	fs.IntVar(&p.Agents, "agents", p.Agents, "`N` agents: the Job's completions and parallelism, AGENTS on the coordinator")
	fs.IntVar(&p.CPU, "cpu", p.CPU, "whole CPUs per agent (requests = limits: Guaranteed QoS; GOMAXPROCS)")
	fs.StringVar(&p.Memory, "memory", p.Memory, "memory per agent and for the coordinator (requests = limits)")
	fs.IntVar(&p.CoordinatorCPU, "coordinator-cpu", p.CoordinatorCPU, "whole CPUs for the coordinator pod")
	fs.IntVar(&p.ServerCPU, "server-cpu", p.ServerCPU, "whole CPUs for the server under test's pod (refserver)")
	fs.IntVar(&p.ServerPort, "server-port", p.ServerPort, "the server under test's port")
	fs.IntVar(&p.Port, "port", p.Port, "the coordinator's port (AGENTS_LISTEN)")
	fs.DurationVar(&p.DialTimeout, "dial-timeout", p.DialTimeout, "how long each agent keeps dialing the coordinator")
	fs.BoolVar(&p.Quick, "quick", false, "QUICK=1 on the coordinator's sweep (a small ladder)")
	fs.StringVar(&p.External, "external", "", "`host:port` of a coordinator outside the cluster: no Service, no coordinator pod")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file` (default: $KUBECONFIG, then ~/.kube/config)")
	kubeContext := fs.String("context", "", "kubeconfig context (default: its current one)")
	runTimeout := fs.Duration("running-timeout", 5*time.Minute, "apply: how long the coordinator and the agents may take to be Running")
	doneTimeout := fs.Duration("timeout", time.Hour, "apply: how long the sweep may take once running (0: do not wait for it; needs --keep)")
	keep := fs.Bool("keep", false, "apply: leave the objects behind after a clean run")
	if err := fs.Parse(args[1:]); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return badInput{err}
	}
	if fs.NArg() > 0 {
		return badf("ceiling k8s %s: unexpected argument %q", verb, fs.Arg(0))
	}
	if err := p.Validate(); err != nil {
		return badInput{err}
	}
	switch {
	case *runTimeout <= 0:
		return badf("--running-timeout: %v is not positive", *runTimeout)
	case *doneTimeout < 0:
		return badf("--timeout: %v is negative", *doneTimeout)
	case *doneTimeout == 0 && !*keep && verb == "apply":
		return badf("--timeout: 0 (do not wait for the sweep) needs --keep, or the run is deleted as soon as it runs")
	}
	if verb == "render" {
		out, err := kube.Render(kube.Build(p))
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	}
	if verb == "apply" {
		// The Secret's token: the harness's when the coordinator is
		// outside (its agents must prove that one), else a fresh one.
		switch v := os.Getenv(agents.TokenEnv); {
		case v != "":
			t, err := agents.ParseToken(agents.TokenEnv, v)
			if err != nil {
				return badInput{err}
			}
			p.Token = t.Text()
		case p.External != "":
			return badf("--external: the agents must prove the harness's token: set %s to its AGENTS_TOKEN", agents.TokenEnv)
		default:
			p.Token = agents.NewToken().Text()
		}
	}
	client, ns, err := newKubeClient(*kubeconfig, *kubeContext)
	if err != nil {
		return badf("--kubeconfig: %w", err)
	}
	if p.Namespace == "" {
		p.Namespace = ns
	}
	r := &kube.Runner{Client: client, Namespace: p.Namespace, Log: stderr}
	objs := kube.Build(p)
	if verb == "delete" {
		return r.Cleanup(objs)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return r.Apply(ctx, objs, kube.ApplyOptions{RunningTimeout: *runTimeout, DoneTimeout: *doneTimeout, Keep: *keep, Logs: stdout})
}

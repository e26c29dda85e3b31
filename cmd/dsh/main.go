// Command dsh serves the dsh-go shell tools to any MCP client, and runs them from the command
// line.
//
// Usage:
//
//	dsh mcp   [-persistent] [-workdir DIR] [-timeout D] [-max-timeout D] [-policy FILE] [-redact=false] [SANDBOX] [HTTP]
//	dsh call  [-persistent] [-present] [-workdir DIR] [-timeout D] [-max-timeout D] [-policy FILE] [-redact=false] [SANDBOX] TOOL JSON
//	dsh tools [-persistent] [-policy FILE] [SANDBOX]
//	dsh sandbox-check
//	dsh version
//
// where SANDBOX is -sandbox MODE [-network on|off] [-deny-read PATH]... [-sandbox-best-effort]
// and HTTP is -http ADDR [-token-file FILE] [-tls-cert FILE -tls-key FILE] [-idle-timeout D]
// [-drain D] [-max-sessions N] [-max-body N] [-max-calls N].
//
// `dsh mcp` is an MCP server over stdio (newline-delimited JSON-RPC on stdin and stdout, built
// on the official Go SDK). It serves bash, bash_output and bash_kill over the local executor,
// or with -persistent one bash tool whose shell keeps its state between calls. With -policy
// FILE a permission policy (github.com/dsh-go/dsh/bash-policy) decides every bash command before
// it runs, and an ask goes to the client's user as an elicitation when the client can ask. Each
// MCP session is one owner: its background tasks and its shell are its own and die with it. On a
// signal that would end it (SIGINT, SIGTERM, SIGHUP, SIGQUIT, and the others of
// supervisor.Terminating), or at the end of stdin (the client is gone: the calls in flight are
// cancelled, their results written; with -finish-at-eof they run to their end first), it kills
// every process it started and exits 0. A tools/call that carries a progress token gets
// notifications/progress while its foreground command runs (the bytes written so far and the
// last line, redacted, at most every 250 ms, only when the output grew, none after the result).
//
// With -http ADDR, dsh mcp serves any number of sessions over the MCP streamable HTTP transport
// at http://ADDR/mcp instead of stdio, each session one owner as over stdio. Every request needs
// a bearer token of -token-file (one per line, "NAME TOKEN" or "TOKEN"; mode 0600 or stricter,
// owned by the user; created with a new token, printed once to stderr, when missing); without
// one it gets 401. A browser Origin other than the server's own or a loopback host gets 403, a
// session id opened with another principal's token 404. ADDR must be a loopback address unless
// -tls-cert and -tls-key are given (a usage error otherwise). A session ends on DELETE or after
// -idle-timeout (10m) without a request, killing what it owns. At -max-sessions (64), or at a
// principal's share of them (-max-principal-sessions), the principal's longest-idle session that
// runs nothing is ended for the new one, or the new one gets 503; past -max-body (4 MiB) a request 413, past -max-calls (16) running calls
// of one session a call gets a JSON-RPC error. On SIGINT or SIGTERM new sessions and calls get
// 503 while the calls in flight finish, for at most -drain (30s); then everything is killed and
// dsh exits 0.
//
// dsh mcp and dsh call run as two processes on Linux: the one that was started stays as a
// supervisor, forwarding signals and exiting as dsh does, and dsh runs as its child. When either
// is killed (SIGKILL, an OOM kill, a crash), the other stops every process dsh started within a
// second. Neither process's /proc files (its environment above all) can be read by the commands.
//
// `dsh call` runs one tool call in-process and prints the text the model would read (with
// -present, one JSON object holding that text and the call's presentation). It exits 0 when
// the call succeeded, even for a command that exited non-zero or timed out, and 1 when the
// result is a tool error (invalid arguments, an unknown tool). Background tasks it starts are
// killed when it exits.
//
// `dsh tools` prints the tools as the MCP server lists them (name, title, description, input
// and output schemas, annotations), as a JSON array.
//
// `dsh version` prints the version of dsh (a line `dsh VERSION GO OS/ARCH`) and one line per
// module of this project it was built from (`PATH VERSION`, with ` => DIR` when the workspace
// took it from a directory).
//
// -policy FILE reads the permission policy (a usage error when it is malformed, naming the
// rule). -redact=false stops replacing the values of the harness's scrubbed secrets with
// [redacted: NAME] in results (on by default).
//
// -workdir is where commands start and what a relative workdir argument is resolved against
// (default: the current directory). -timeout is the default time a foreground command may run
// (bash: 2m, persistent bash: 5m) and -max-timeout the cap on a call's own timeoutMs (10m; not
// with -persistent); a -timeout above the cap, given or default, is a usage error. Usage errors
// exit 2.
//
// -sandbox confines every command (default off): read-only lets it write only its private
// $TMPDIR, workspace-write also the -workdir directory; -network (default off) says whether it may
// use the network; -deny-read adds a path it may not read to ~/.ssh, ~/.aws, ~/.gnupg, ~/.kube,
// ~/.docker, ~/.netrc and ~/.config/gcloud (-deny-read none drops those); a machine that cannot
// enforce the sandbox fails every call with "sandbox unavailable: <what is missing>" unless
// -sandbox-best-effort is given. `dsh sandbox-check` prints what this machine offers and exits 1
// when a sandboxed call cannot run.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashpolicy "github.com/dsh-go/dsh/bash-policy"
	"github.com/dsh-go/dsh/internal/supervisor"
	persistentbash "github.com/dsh-go/dsh/tool-bash-persistent"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `usage:
  dsh mcp   [-persistent] [-workdir DIR] [-timeout D] [-max-timeout D] [-policy FILE] [-redact=false] [SANDBOX] [HTTP]
  dsh call  [-persistent] [-present] [-workdir DIR] [-timeout D] [-max-timeout D] [-policy FILE] [-redact=false] [SANDBOX] TOOL JSON
  dsh tools [-persistent] [-policy FILE] [SANDBOX]
  dsh sandbox-check
  dsh version

SANDBOX is -sandbox off|read-only|workspace-write [-network on|off] [-deny-read PATH]... [-sandbox-best-effort]
HTTP is -http ADDR [-token-file FILE] [-tls-cert FILE -tls-key FILE] [-idle-timeout D] [-drain D]
        [-max-sessions N] [-max-body N] [-max-calls N]

mcp    serve the shell tools as an MCP server over stdio (or streamable HTTP with -http)
call   run one tool call and print the text the model reads
tools  print the tools' MCP definitions (schemas) as JSON
sandbox-check  print what this machine offers the sandbox
version  print the versions of dsh and of the modules it was built from
`

// Exit codes.
const (
	exitOK    = 0
	exitTool  = 1 // a tool error (dsh call), a failed shutdown (dsh mcp)
	exitUsage = 2 // bad command line, unusable -workdir, output not writable
)

// run runs dsh with the command-line arguments args (without the program name) and returns the
// exit code. dsh mcp speaks MCP on stdin and stdout; the other commands print to stdout.
// Diagnostics go to stderr.
func run(args []string, stdin io.ReadCloser, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	switch args[0] {
	case "mcp":
		return runMCP(args[1:], stdin, stdout, stderr)
	case "call":
		return runCall(args[1:], stdout, stderr)
	case "tools":
		return runTools(args[1:], stdout, stderr)
	case "version":
		return runVersion(args[1:], stdout, stderr)
	case "sandbox-check":
		return runSandboxCheck(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "dsh: unknown command %q\n%s", args[0], usage)
	return exitUsage
}

// flags are the settings every command shares.
type flags struct {
	fs         *flag.FlagSet
	persistent bool
	present    bool
	workdir    string
	timeout    time.Duration
	maxTimeout time.Duration
	sandbox    sandboxFlags
	confine    bash.Sandbox
	policyFile string
	policy     *bashpolicy.Policy
	redact     bool
	http       httpConfig // dsh mcp only
	// finishAtEOF lets the calls in flight at the end of stdin run to their end (dsh mcp only).
	finishAtEOF bool
}

// newFlags returns the flag set of command name; withRun adds the flags of commands that run
// tools (-workdir, -timeout, -max-timeout), withPresent adds -present.
func newFlags(name string, stderr io.Writer, withRun, withPresent bool) *flags {
	f := &flags{fs: flag.NewFlagSet("dsh "+name, flag.ContinueOnError)}
	f.fs.SetOutput(stderr)
	f.fs.BoolVar(&f.persistent, "persistent", false, "serve the persistent bash (one shell per session) instead of bash, bash_output, bash_kill and bash_tasks")
	f.sandbox.register(f.fs)
	f.fs.StringVar(&f.policyFile, "policy", "", "decide every bash command with the permission policy in `FILE` (JSON)")
	if withPresent {
		f.fs.BoolVar(&f.present, "present", false, "print one JSON object with the text and the call's presentation")
	}
	if withRun {
		f.fs.StringVar(&f.workdir, "workdir", "", "directory commands start in (default: the current directory)")
		f.fs.DurationVar(&f.timeout, "timeout", 0, "default foreground timeout (default 2m; 5m with -persistent)")
		f.fs.DurationVar(&f.maxTimeout, "max-timeout", 0, "cap on a call's timeoutMs (default 10m; not with -persistent)")
		f.fs.BoolVar(&f.redact, "redact", true, "replace the values of the harness's scrubbed secrets with [redacted: NAME] in results")
	}
	return f
}

// parse parses args and checks the shared settings. It returns the positional arguments, or a
// usage exit code when the command line is wrong (exitOK for -h).
func (f *flags) parse(args []string) ([]string, int, bool) {
	if err := f.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, exitOK, false
		}
		return nil, exitUsage, false
	}
	fail := func(format string, a ...any) ([]string, int, bool) {
		fmt.Fprintf(f.fs.Output(), "%s: "+format+"\n", append([]any{f.fs.Name()}, a...)...)
		return nil, exitUsage, false
	}
	switch {
	case f.timeout < 0:
		return fail("-timeout must be positive, got %v", f.timeout)
	case f.maxTimeout < 0:
		return fail("-max-timeout must be positive, got %v", f.maxTimeout)
	case f.persistent && f.maxTimeout != 0:
		return fail("-max-timeout does not apply to -persistent (its bash has no per-call timeout)")
	case !f.persistent && f.timeout > cmp.Or(f.maxTimeout, bash.DefaultMaxTimeout):
		// One rule whether or not -max-timeout is given: a default above the cap is a mistake,
		// never silently capped.
		return fail("-timeout %v is above -max-timeout %v", f.timeout, cmp.Or(f.maxTimeout, bash.DefaultMaxTimeout))
	}
	confine, err := f.sandbox.policy()
	if err != nil {
		return fail("%v", err)
	}
	f.confine = confine
	if f.policyFile != "" {
		p, err := bashpolicy.Load(f.policyFile)
		if err != nil {
			return fail("%v", err)
		}
		f.policy = p
	}
	if f.workdir != "" {
		dir, err := resolveWorkdir(f.workdir)
		if err != nil {
			return fail("%v", err)
		}
		f.workdir = dir
	}
	return f.fs.Args(), exitOK, true
}

// config returns the tool configuration the flags describe, logging to stderr.
func (f *flags) config(stderr io.Writer) config {
	return config{
		Persistent: f.persistent,
		Workdir:    f.workdir,
		Timeout:    f.timeout,
		MaxTimeout: f.maxTimeout,
		Sandbox:    f.denyOwnFiles(f.confine),
		Logger:     slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Policy:     f.policy,
		NoRedact:   !f.redact && f.fs.Lookup("redact") != nil,
	}
}

// shutdownGrace bounds how long closing waits for processes to exit after SIGTERM before it
// sends SIGKILL to the rest.
const shutdownGrace = 5 * time.Second

// drainLimit bounds how long dsh mcp still answers after the end of stdin: the longest a call of
// cfg's tools can run (the -max-timeout cap, or the persistent bash's -timeout) and a minute
// for stopping it. Calls end well before; the bound is for a request the SDK would never
// answer.
func drainLimit(cfg config) time.Duration {
	longest := cmp.Or(cfg.MaxTimeout, bash.DefaultMaxTimeout)
	if cfg.Persistent {
		longest = cmp.Or(cfg.Timeout, persistentbash.DefaultTimeout)
	}
	return longest + time.Minute
}

// runMCP is `dsh mcp`: one MCP session over stdin and stdout until the client closes stdin and
// every request read has been answered, or a terminating signal arrives (SIGINT, SIGTERM,
// SIGHUP, SIGQUIT, any of supervisor.Terminating); then every process is killed and it exits 0.
func runMCP(args []string, stdin io.ReadCloser, stdout, stderr io.Writer) int {
	f := newFlags("mcp", stderr, true, false)
	f.http.register(f.fs)
	f.fs.BoolVar(&f.finishAtEOF, "finish-at-eof", false, "at the end of stdin, let the calls in flight finish before exiting (for scripts that pipe requests in); by default they are cancelled at once, the client being gone")
	rest, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "dsh mcp: unexpected arguments %q\n", rest)
		return exitUsage
	}
	if err := f.http.check(f.fs); err != nil {
		fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
		return exitUsage
	}
	var tokens *tokenSet
	if f.http.Addr != "" {
		// Before the supervisor starts: a bad token file is a usage error, and a new one is
		// created (and its token shown) once, by the process that was started.
		ts, err := loadTokens(f.http.TokenFile, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
			return exitUsage
		}
		tokens = ts
	}
	if err := protect(); err != nil {
		fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
		return exitTool
	}
	// A client that goes away must not kill dsh with SIGPIPE before it has cleaned up: with a
	// handler installed, writes to the closed stdout fail with EPIPE instead. (Ignoring the
	// signal instead would be inherited by every command.)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	defer signal.Stop(pipe)
	// Every signal that would end dsh ends it the way SIGTERM does: a closing terminal's SIGHUP
	// or a SIGQUIT must not leave the commands running under init.
	ctx, stop := signal.NotifyContext(context.Background(), supervisor.Terminating()...)
	defer stop()
	if tokens != nil {
		return runHTTP(ctx, f.config(stderr), f.http, tokens, stderr)
	}
	return serve(ctx, f.config(stderr), stdin, nopCloser{stdout}, stderr, f.finishAtEOF)
}

// serve runs the MCP server on one session over in and out until in ends and every request
// read from it has been answered (see lineTransport), or ctx is done; then it closes the
// server, which cancels the calls still in flight and kills every process. The end of in
// cancels the calls in flight at once (their results are still written), unless finishAtEOF:
// then they run to their end. It returns exitOK,
// exitUsage when the tools refuse cfg, or exitTool when the session could not start or the
// close failed (processes survived it).
func serve(ctx context.Context, cfg config, in io.ReadCloser, out io.WriteCloser, stderr io.Writer, finishAtEOF bool) int {
	srv, err := newServer(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
		return exitUsage
	}
	// The cancelled calls answer within the executor's grace; with -finish-at-eof the calls run
	// to their end, at most the longest a call may run.
	atEnd, drain := srv.cancelAllCalls, shutdownGrace
	if finishAtEOF {
		atEnd, drain = nil, drainLimit(cfg)
	}
	ss, err := srv.connect(ctx, lineTransport(in, out, maxLine, drain, atEnd))
	if err != nil {
		fmt.Fprintf(stderr, "dsh mcp: %v\n", err)
		_ = srv.close(context.Background())
		return exitTool
	}
	done := make(chan struct{})
	go func() {
		_ = ss.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	err = srv.close(closeCtx)
	<-done
	return shutdownStatus(stderr, err)
}

// shutdownStatus reports the server's close error err on stderr and returns dsh mcp's exit
// status: 0 when everything was stopped (processes that outlived SIGTERM for shutdownGrace were
// killed with SIGKILL and reaped, which is said), exitTool when something may have survived.
func shutdownStatus(stderr io.Writer, err error) int {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "dsh mcp: shutdown: processes ignored SIGTERM for %v and were killed\n", shutdownGrace)
	case err != nil:
		fmt.Fprintf(stderr, "dsh mcp: shutdown: %v\n", err)
		return exitTool
	}
	return exitOK
}

// nopCloser is a writer whose Close does nothing: closing the session must not close the
// process's stdout.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

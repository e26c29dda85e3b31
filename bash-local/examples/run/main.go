// Command run runs one shell command through the local executor and prints the result the way a
// model-facing tool would see it: stdout, a [stderr] section, and the status markers.
//
// Usage:
//
//	go run ./bash-local/examples/run [-timeout 30s] [-workdir DIR] [--] 'command'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
)

func main() {
	timeout := flag.Duration("timeout", 0, "foreground timeout (default: the executor's, 120s)")
	workdir := flag.String("workdir", "", "directory to run in (default: the current one)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: run [-timeout D] [-workdir DIR] [--] 'command'\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *workdir, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}

func run(command, workdir string, timeout time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Keep spill files: the printed result may name one for you to open.
	ex, err := bashlocal.New(bashlocal.Config{KeepSpills: true})
	if err != nil {
		return err
	}
	defer ex.Close(context.Background())
	spec, err := ex.Resolve(bash.Request{Command: command, Workdir: workdir, Timeout: timeout})
	if err != nil {
		return err
	}
	res, err := ex.Run(ctx, spec)
	if err != nil {
		return err
	}
	fmt.Print(render(res))
	return nil
}

// render shows a result with its markers: both streams (head, an omission line, tail), then the
// reason the executor stopped the command and its exit status.
func render(res bash.RunResult) string {
	var b strings.Builder
	stream(&b, res.Stdout)
	if res.Stderr.TotalBytes > 0 {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[stderr]\n")
		stream(&b, res.Stderr)
	}
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	switch {
	case res.TimedOut:
		fmt.Fprintf(&b, "[timed out after %dms]\n", res.Timeout.Milliseconds())
	case res.Aborted:
		b.WriteString("[aborted]\n")
	}
	if res.Signal != "" {
		fmt.Fprintf(&b, "[killed by signal: %s]\n", res.Signal)
	} else if res.ExitCode != nil {
		fmt.Fprintf(&b, "[exit code: %d]\n", *res.ExitCode)
	}
	return b.String()
}

func stream(b *strings.Builder, o bash.Output) {
	b.WriteString(o.Head)
	if o.Truncated() {
		if !strings.HasSuffix(o.Head, "\n") {
			b.WriteByte('\n')
		}
		where := "full output: (unavailable)"
		switch {
		case o.Spill.Path != "" && o.Spill.Partial:
			where = "first bytes: " + o.Spill.Path
		case o.Spill.Path != "":
			where = "full output: " + o.Spill.Path
		}
		fmt.Fprintf(b, "[output truncated: %d bytes omitted; %s]\n", o.OmittedBytes, where)
	}
	b.WriteString(o.Tail)
}

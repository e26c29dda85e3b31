package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// TestScripts runs the command-line scenarios in testdata/script: dsh call, dsh tools, and dsh
// mcp as a subprocess spoken to in JSON-RPC over its stdin and stdout.
//
// Extra commands:
//
//	mcp start [FLAG...]   start `dsh mcp FLAG...` with piped stdin and stdout
//	mcp send LINE         write LINE; when it is a request (it has an id), wait for the
//	                      response with that id and print every message read until then
//	mcp send -async LINE  write LINE and do not wait (what comes back is printed by close)
//	mcp poll REGEXP LINE  send the request LINE again and again until its response matches
//	                      REGEXP, and print the responses
//	mcp recv              read and print the next message
//	mcp eof               close dsh's stdin and do not wait (dsh answers what it read first)
//	mcp close             close dsh's stdin (unless mcp eof did) and wait for it to exit; fails
//	                      unless it exits 0; dsh's stderr becomes the command's stderr
//	mcp signal SIG        send SIG (TERM, HUP, KILL, …) to dsh, then wait as mcp close does
//	                      (with !, expect dsh to fail or be killed)
//	signal SIG FILE       send SIG to the process whose pid FILE holds (dsh's worker, say)
//	waitfile FILE         wait until FILE holds a whole line
//	gone [-within D] FILE...
//	                      fail when a process whose pid a FILE holds is alive (after D, when
//	                      given: it must be gone within D)
//	spillpath FILE NAME   set $NAME to the spill path FILE names in "full output: PATH]" and
//	                      $NAMEdir to its directory
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("GORACE", os.Getenv("GORACE")) // see TestMain
			env.Values[mcpKey{}] = &mcpProc{}
			env.Defer(func() { env.Values[mcpKey{}].(*mcpProc).kill() })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"mcp":       cmdMCP,
			"signal":    cmdSignal,
			"waitfile":  cmdWaitfile,
			"gone":      cmdGone,
			"spillpath": cmdSpillpath,
		},
	})
}

type mcpKey struct{}

// mcpProc is the `dsh mcp` subprocess of one script.
type mcpProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	lines  chan string // messages read from stdout, by a reader goroutine
	done   chan struct{}
	eof    bool // stdin is closed
	waited bool
}

// kill ends a subprocess the script left running (a failed script).
func (p *mcpProc) kill() {
	if p.cmd == nil || p.waited {
		return
	}
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
	<-p.done
}

const scriptDeadline = 20 * time.Second

func cmdMCP(ts *testscript.TestScript, neg bool, args []string) {
	p := ts.Value(mcpKey{}).(*mcpProc)
	if len(args) == 0 {
		ts.Fatalf("usage: mcp start|send|poll|recv|eof|close|signal ...")
	}
	if neg && args[0] != "close" && args[0] != "signal" {
		ts.Fatalf("mcp %s does not support !", args[0])
	}
	switch args[0] {
	case "start":
		if p.cmd != nil && !p.waited {
			ts.Fatalf("mcp already started")
		}
		*p = mcpProc{}
		bin := lookPath(ts, "dsh")
		p.cmd = exec.Command(bin, append([]string{"mcp"}, args[1:]...)...)
		p.cmd.Dir = ts.Getenv("WORK")
		p.cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"))
		p.cmd.Stderr = &p.stderr
		dieWithTest(p.cmd)
		var err error
		p.stdin, err = p.cmd.StdinPipe()
		ts.Check(err)
		stdout, err := p.cmd.StdoutPipe()
		ts.Check(err)
		ts.Check(p.cmd.Start())
		p.lines, p.done = make(chan string, 100), make(chan struct{})
		go func() {
			defer close(p.done)
			defer close(p.lines)
			r := bufio.NewReaderSize(stdout, 1<<20)
			for {
				line, err := r.ReadString('\n')
				if line != "" {
					p.lines <- strings.TrimSuffix(line, "\n")
				}
				if err != nil {
					return
				}
			}
		}()
	case "send":
		async := len(args) == 3 && args[1] == "-async"
		if async {
			args = args[1:]
		}
		if len(args) != 2 {
			ts.Fatalf("usage: mcp send [-async] LINE")
		}
		p.started(ts)
		if p.eof {
			ts.Fatalf("mcp send: stdin is closed")
		}
		if _, err := io.WriteString(p.stdin, args[1]+"\n"); err != nil {
			ts.Fatalf("write to dsh: %v", err)
		}
		if async {
			return
		}
		if id := requestID(args[1]); id != "" {
			p.await(ts, id, ts.Stdout())
		}
	case "poll":
		if len(args) != 3 {
			ts.Fatalf("usage: mcp poll REGEXP LINE")
		}
		p.started(ts)
		re, err := regexp.Compile(args[1])
		ts.Check(err)
		id := requestID(args[2])
		if id == "" {
			ts.Fatalf("mcp poll: %s is not a request", args[2])
		}
		out := ts.Stdout()
		deadline := time.Now().Add(scriptDeadline)
		for {
			if _, err := io.WriteString(p.stdin, args[2]+"\n"); err != nil {
				ts.Fatalf("write to dsh: %v", err)
			}
			resp := p.await(ts, id, out)
			if re.MatchString(resp) {
				return
			}
			if time.Now().After(deadline) {
				ts.Fatalf("no response matched %s within %v", args[1], scriptDeadline)
			}
			time.Sleep(20 * time.Millisecond) // polling interval, bounded by deadline
		}
	case "recv":
		p.started(ts)
		fmt.Fprintln(ts.Stdout(), p.recv(ts))
	case "eof":
		p.started(ts)
		if p.eof {
			ts.Fatalf("mcp eof: stdin is already closed")
		}
		ts.Check(p.stdin.Close())
		p.eof = true
	case "close", "signal":
		p.started(ts)
		out, errOut := ts.Stdout(), ts.Stderr() // replace the previous command's even when nothing comes
		if args[0] == "close" {
			if !p.eof {
				ts.Check(p.stdin.Close())
				p.eof = true
			}
		} else {
			if len(args) != 2 {
				ts.Fatalf("usage: mcp signal SIG")
			}
			ts.Check(p.cmd.Process.Signal(signalNamed(ts, args[1])))
		}
		exited := make(chan error, 1)
		go func() { exited <- p.cmd.Wait() }()
		var err error
		select {
		case err = <-exited:
		case <-time.After(scriptDeadline):
			_ = p.cmd.Process.Kill()
			<-exited
			ts.Fatalf("dsh mcp did not exit within %v of %s", scriptDeadline, args[0])
		}
		p.waited = true
		<-p.done
		for line := range p.lines {
			fmt.Fprintln(out, line) // messages nobody waited for
		}
		fmt.Fprint(errOut, p.stderr.String()) // dsh's stderr, for the script to check
		switch {
		case err != nil && !neg:
			ts.Fatalf("dsh mcp: %v", err)
		case err == nil && neg:
			ts.Fatalf("dsh mcp exited 0, want a failure")
		}
	default:
		ts.Fatalf("unknown mcp subcommand %q", args[0])
	}
}

// requestID returns the id of line when it is a JSON-RPC request, and "" for a notification or
// a broken line.
func requestID(line string) string {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal([]byte(line), &msg) != nil || len(msg.ID) == 0 || string(msg.ID) == "null" || msg.Method == "" {
		return ""
	}
	return string(msg.ID)
}

// await prints to out every message dsh writes until the response with id, and returns that
// response.
func (p *mcpProc) await(ts *testscript.TestScript, id string, out io.Writer) string {
	for {
		line := p.recv(ts)
		fmt.Fprintln(out, line)
		var r struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(line), &r) == nil && string(r.ID) == id {
			return line
		}
	}
}

func (p *mcpProc) started(ts *testscript.TestScript) {
	if p.cmd == nil || p.waited {
		ts.Fatalf("mcp is not running; use mcp start")
	}
}

// recv returns the next message dsh wrote, failing the script after the deadline or at the end
// of dsh's output.
func (p *mcpProc) recv(ts *testscript.TestScript) string {
	select {
	case line, ok := <-p.lines:
		if !ok {
			ts.Fatalf("dsh closed its stdout; stderr:\n%s", p.stderr.String())
		}
		return line
	case <-time.After(scriptDeadline):
		ts.Fatalf("no message from dsh within %v", scriptDeadline)
	}
	return ""
}

// lookPath finds name in the script's PATH, where testscript installs the commands of
// TestMain.
func lookPath(ts *testscript.TestScript, name string) string {
	for _, dir := range filepath.SplitList(ts.Getenv("PATH")) {
		if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && fi.Mode().IsRegular() {
			return filepath.Join(dir, name)
		}
	}
	ts.Fatalf("%s not in $PATH", name)
	return ""
}

func cmdWaitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	file := ts.MkAbs(args[0])
	if !eventually(scriptDeadline, func() bool {
		b, err := os.ReadFile(file)
		return err == nil && strings.HasSuffix(string(b), "\n")
	}) {
		ts.Fatalf("%s holds no line after %v", args[0], scriptDeadline)
	}
}

// signalNamed returns the signal named name without its SIG prefix (TERM, HUP, KILL, …).
func signalNamed(ts *testscript.TestScript, name string) syscall.Signal {
	sig := unix.SignalNum("SIG" + name)
	if sig == 0 {
		ts.Fatalf("unknown signal %s", name)
	}
	return sig
}

// pidIn returns the pid that file holds.
func pidIn(ts *testscript.TestScript, file string) int {
	pid, err := strconv.Atoi(strings.TrimSpace(ts.ReadFile(file)))
	if err != nil {
		ts.Fatalf("%s: %v", file, err)
	}
	return pid
}

func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: signal SIG FILE")
	}
	ts.Check(syscall.Kill(pidIn(ts, args[1]), signalNamed(ts, args[0])))
}

func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	var within time.Duration
	if len(args) > 2 && args[0] == "-within" {
		d, err := time.ParseDuration(args[1])
		ts.Check(err)
		within, args = d, args[2:]
	}
	if neg || len(args) == 0 {
		ts.Fatalf("usage: gone [-within D] FILE...")
	}
	pids := make([]int, len(args))
	for i, file := range args {
		pids[i] = pidIn(ts, file)
	}
	eventually(within, func() bool { return !slices.ContainsFunc(pids, alive) })
	var left []string
	for i, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			left = append(left, fmt.Sprintf("process %d (from %s)", pid, args[i]))
		}
	}
	if len(left) > 0 {
		ts.Fatalf("still alive: %s", strings.Join(left, ", "))
	}
}

var spillRE = regexp.MustCompile(`full output: (/[^\]\n]+)\]`)

func cmdSpillpath(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: spillpath FILE NAME")
	}
	m := spillRE.FindStringSubmatch(ts.ReadFile(args[0]))
	if m == nil {
		ts.Fatalf("%s names no spill file", args[0])
	}
	ts.Setenv(args[1], m[1])
	ts.Setenv(args[1]+"dir", filepath.Dir(m[1]))
}

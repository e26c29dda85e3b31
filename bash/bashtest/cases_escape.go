package bashtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash"
)

// The escapee cases start, from one command, a process in each of the shapes that leave the
// command's process group and, but for the first, its parent: a setsid child, a double fork
// whose middle process called setsid, and a nohup child that forked itself into a new session.
// Each runs "sleep" under a unique name (exec -a), so a second executor of the same kind (the
// probe, which may be remote) finds it through /proc whatever its pid, parent or session. The
// cases need Linux and util-linux's setsid on the side that runs the commands.

// escapeShapes are the ways out, by name; %s is the process's unique name.
var escapeShapes = []struct{ name, command string }{
	{"setsid", `setsid bash -c 'exec -a %s sleep 3600' </dev/null >/dev/null 2>&1 &`},
	{"double-fork", `( ( setsid bash -c 'exec -a %s sleep 3600' ) </dev/null >/dev/null 2>&1 & ) &`},
	{"nohup", `nohup setsid -f bash -c 'exec -a %s sleep 3600' </dev/null >/dev/null 2>&1 &`},
}

// escapees is one command's set of escaped processes.
type escapees struct {
	c     *kc
	names []string // one unique process name per shape
}

func newEscapees(c *kc) *escapees {
	var rnd [6]byte
	rand.Read(rnd[:])
	prefix := "bashtest-escapee-" + hex.EncodeToString(rnd[:])
	e := &escapees{c: c}
	for _, s := range escapeShapes {
		e.names = append(e.names, prefix+"-"+s.name)
	}
	return e
}

// command returns bash that starts every escapee, waits until each shows in /proc, and then
// runs rest.
func (e *escapees) command(rest string) string {
	var b strings.Builder
	for i, s := range escapeShapes {
		fmt.Fprintf(&b, s.command+"\n", e.names[i])
	}
	// Wait inside the command (not in the kit) for the escapees to exist before going on.
	fmt.Fprintf(&b, "for i in $(seq 1 1000); do n=0; %s [ $n = %d ] && break; sleep 0.01; done\n", e.countScript(), len(e.names))
	b.WriteString(rest)
	return b.String()
}

// countScript sets $n to how many escapees are alive. It reads each process's argv[0] with
// builtins only (one pass over /proc, no process started per entry, so it stays quick on a
// loaded machine) and ignores a process that exits while it is read. The names are split in the
// script text so that the script's own command line never matches them.
func (e *escapees) countScript() string {
	var b, match strings.Builder
	for i, name := range e.names {
		half := len(name) / 2
		fmt.Fprintf(&b, "m%d=%s; m%d=${m%d}%s; ", i, name[:half], i, i, name[half:])
		if i > 0 {
			match.WriteString(" || ")
		}
		fmt.Fprintf(&match, "$c == \"$m%d\"", i)
	}
	fmt.Fprintf(&b, "for f in /proc/[0-9]*/cmdline; do c=; { IFS= read -r -d '' c <\"$f\"; } 2>/dev/null; [[ %s ]] && n=$((n+1)); done; ", match.String())
	return b.String()
}

// alive returns how many escapees a fresh probe executor sees alive now.
func (e *escapees) alive(probe bash.Executor) int {
	res, err := probe.Run(e.c.ctx, bash.Request{Command: "n=0; " + e.countScript() + "echo $n", Timeout: e.c.opts.Slack})
	if err != nil || res.ExitCode == nil || *res.ExitCode != 0 {
		e.c.fatalf("the probe executor could not count processes: %v (%s)", err, res.Stderr.Text())
	}
	var n int
	fmt.Sscan(res.Stdout.Text(), &n)
	return n
}

// wantGone fails the case unless every escapee is gone within the kill limit after how (Kill, a
// timeout, Close) stopped their command; survivors are killed through the probe.
func (e *escapees) wantGone(how string) {
	c := e.c
	probe, err := c.probe()
	if err != nil {
		c.fatalf("creating the probe executor: %v", err)
	}
	defer probe.Close(c.ctx)
	deadline := time.Now().Add(c.killLimit())
	n := e.alive(probe)
	for n > 0 && time.Now().Before(deadline) {
		c.pause()
		n = e.alive(probe)
	}
	if n > 0 {
		c.errorf("%d of the processes that left the command's group (setsid, double fork, nohup) are alive %v after %s: no orphans, escapees included", n, c.killLimit(), how)
		kill := ""
		for _, name := range e.names {
			kill += fmt.Sprintf("pkill -KILL -f '^%s ' ; ", name)
		}
		probe.Run(c.ctx, bash.Request{Command: kill + "true", Timeout: c.opts.Slack})
	}
}

func escapeesKill(c *kc) {
	e := newEscapees(c)
	task := c.start(c.spec(e.command("echo started; sleep 3600"), nil))
	c.readUntil(task, "started\n", c.killLimit()+c.opts.Slack)
	if killed, err := c.kill(task.ID()); err != nil || !killed {
		c.fatalf("Kill of the running task = %v, %v; want true", killed, err)
	}
	c.mustDone(task, c.killLimit(), "after Kill")
	e.wantGone("Kill")
}

// escapeesKillWaits: Kill returns once the tree is gone, so one look right after it returns, with
// no polling, finds none of the command's processes: not a member of its group, not an escapee.
func escapeesKillWaits(c *kc) {
	e := newEscapees(c)
	member := e.names[0] + "-member"
	cmd := e.command(fmt.Sprintf("(exec -a %s sleep 3600) & echo started; wait", member))
	e.names = append(e.names, member) // counted from now on; the command waited for the others only
	task := c.start(c.spec(cmd, nil))
	c.readUntil(task, "started\n", c.killLimit()+c.opts.Slack)
	probe, err := c.probe()
	if err != nil {
		c.fatalf("creating the probe executor: %v", err)
	}
	defer probe.Close(c.ctx)
	if killed, err := c.kill(task.ID()); err != nil || !killed {
		c.fatalf("Kill of the running task = %v, %v; want true", killed, err)
	}
	if n := e.alive(probe); n > 0 {
		c.errorf("%d of the command's processes (a member of its group, the escapees) alive right after Kill returned: Kill returns once the tree is gone", n)
	}
	c.mustDone(task, c.killLimit(), "after Kill")
	e.wantGone("Kill")
}

func escapeesTimeout(c *kc) {
	e := newEscapees(c)
	timeout := min(2*time.Second+c.opts.Slack/2, c.opts.MaxTimeout)
	res, _, err := c.run(c.ctx, c.spec(e.command("echo started; sleep 3600"), func(r *bash.Request) { r.Timeout = timeout }), c.runLimit(timeout))
	if err != nil {
		c.fatalf("Run returned %v, want a result", err)
	}
	if !res.TimedOut || res.Stdout.Text() != "started\n" {
		c.fatalf("Run: TimedOut %v, stdout %q; want a timeout after the escapees started", res.TimedOut, res.Stdout.Text())
	}
	e.wantGone("the timeout")
}

func escapeesClose(c *kc) {
	e := newEscapees(c)
	task := c.start(c.spec(e.command("echo started; sleep 3600"), nil))
	c.readUntil(task, "started\n", c.killLimit()+c.opts.Slack)
	if err := c.close(c.ctx, c.killLimit()+c.opts.Slack); err != nil {
		c.errorf("Close returned %v, want nil", err)
	}
	e.wantGone("Close")
}

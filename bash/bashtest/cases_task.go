package bashtest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-go/dsh/bash"
)

func startLifecycle(c *kc) {
	spec := c.spec(CmdSleep, nil)
	task := c.start(spec)
	if task.ID() == "" {
		c.errorf("Start returned a task with an empty id")
	}
	if task.Command() != CmdSleep {
		c.errorf("task %s: Command() = %q, want %q", task.ID(), task.Command(), CmdSleep)
	}
	if st := task.Status(); st != bash.TaskRunning {
		c.errorf("task %s (%q): Status right after Start = %q, want running", task.ID(), CmdSleep, st)
	}
	if code := task.ExitCode(); code != nil {
		c.errorf("task %s (%q): ExitCode while running = %d, want nil", task.ID(), CmdSleep, *code)
	}
	if sig := task.Signal(); sig != "" {
		c.errorf("task %s (%q): Signal while running = %q, want none", task.ID(), CmdSleep, sig)
	}
	if isClosed(task.Done()) {
		c.errorf("task %s (%q): Done is closed while the task runs", task.ID(), CmdSleep)
	}
	if got, ok := c.get(task.ID()); !ok || got != task {
		c.errorf("Get(%q) = %p, %v; want the *Task Start returned (%p), true", task.ID(), got, ok, task)
	}
	if tasks := c.list(); !sameTasks(tasks, []*bash.Task{task}) {
		c.errorf("List() = %v, want exactly the task Start returned", ids(tasks))
	}
	// A task with no timeout of its own: a short spec timeout must not stop it.
	short := c.spec(CmdSleep, func(r *bash.Request) { r.Timeout = min(sleepTimeout, c.opts.MaxTimeout) })
	untimed := c.start(short)
	if c.waitDone(untimed, 2*short.Timeout+c.opts.Grace) {
		c.errorf("task %s (%q) with spec timeout %v ended by itself (%v): background tasks have no timeout", untimed.ID(), CmdSleep, short.Timeout, factsOf(untimed))
	}
}

func ids(tasks []*bash.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		if t == nil {
			out[i] = "<nil>"
		} else {
			out[i] = string(t.ID())
		}
	}
	return out
}

func startIDsAndOrder(c *kc) {
	var tasks []*bash.Task
	seen := map[bash.TaskID]bool{}
	for _, cmd := range []string{CmdTrue, CmdSleep, CmdExit3, CmdSleep, CmdEcho} {
		task := c.startCmd(cmd)
		if seen[task.ID()] {
			c.errorf("Start issued id %q twice: ids are unique", task.ID())
		}
		seen[task.ID()] = true
		tasks = append(tasks, task)
	}
	got := c.list()
	if !sameTasks(got, tasks) {
		c.errorf("List() = %v, want the started tasks in start order %v (the same handles)", ids(got), ids(tasks))
	}
	if len(got) > 0 {
		got[0] = nil
		if again := c.list(); len(again) == 0 || again[0] != tasks[0] {
			c.errorf("changing the slice List returned changed the executor's list: the slice is the caller's")
		}
	}
	for _, task := range tasks {
		if got, ok := c.get(task.ID()); !ok || got != task {
			c.errorf("Get(%q) = %p, %v; want the *Task Start returned (%p), true", task.ID(), got, ok, task)
		}
	}
	if got, ok := c.get("bashtest-never-issued"); ok || got != nil {
		c.errorf("Get of an id never issued = %p, %v; want nil, false", got, ok)
	}
}

func startExitFacts(c *kc) {
	tests := []struct {
		command string
		want    facts
	}{
		{CmdTrue, completed(0)},
		{CmdEcho, completed(0)},
		{CmdExit3, completed(3)},
		{CmdSelfTerm, killedBy("SIGTERM")},
	}
	var tasks []*bash.Task
	for _, tt := range tests {
		tasks = append(tasks, c.startCmd(tt.command))
	}
	for i, tt := range tests {
		task := tasks[i]
		c.mustDone(task, c.quick(), "for a command that ends by itself")
		why := ""
		if tt.want.status == bash.TaskKilled {
			why = ": a task that dies of a signal is killed"
		}
		c.wantFacts(task, tt.want, why)
		if c.mustKill(task.ID()) {
			c.errorf("Kill(%q) of a finished task returned true, want false", task.ID())
		}
		c.wantFacts(task, tt.want, ": the status settles once")
	}
}

func startStdinEnv(c *kc) {
	spec := c.spec(CmdStdinEnv, func(r *bash.Request) {
		r.Stdin = []byte("in-bytes\n")
		r.Env = map[string]string{EnvVar: "v a l"}
	})
	task := c.start(spec)
	c.mustDone(task, c.quick(), "for a command that reads its given stdin")
	if r := c.read(task.ID()); r.Delta != "in-bytes\n[v a l]" {
		c.errorf("task %s (%q) with stdin and env wrote %q, want %q", task.ID(), CmdStdinEnv, r.Delta, "in-bytes\n[v a l]")
	}
}

func startSpawnFailure(c *kc) {
	rec := newRecorder(c)
	c.onTaskDone(rec.listener("L"))
	dir := c.missingDir()
	spec := c.spec(CmdEcho, func(r *bash.Request) { r.Workdir = dir })
	task, err := rec.startErr(spec)
	if err != nil {
		c.fatalf("Start with Workdir %q, which does not exist, returned %v; want a task that ends killed with a \"spawn failed:\" note", dir, err)
	}
	if task == nil {
		c.fatalf("Start returned a nil task and no error")
	}
	c.mustDone(task, c.quick(), "after its spawn failed (Done always closes)")
	if st := task.Status(); st != bash.TaskKilled {
		c.errorf("task %s that failed to spawn has status %q, want killed", task.ID(), st)
	}
	if code := task.ExitCode(); code != nil {
		c.errorf("task %s that failed to spawn has exit code %d, want none", task.ID(), *code)
	}
	rec.expectOnce(task, "a spawn failure", "L")
	r := c.read(task.ID())
	i := strings.Index(r.Delta, "[stderr]\n")
	switch {
	case i < 0:
		c.errorf("the first ReadOutput of task %s that failed to spawn gave %q, want a [stderr] section with \"spawn failed:\"", task.ID(), r.Delta)
	case !strings.Contains(r.Delta[i:], "spawn failed:"):
		c.errorf("the stderr section of the first read of task %s that failed to spawn is %q, want \"spawn failed: <reason>\"", task.ID(), r.Delta[i:])
	}
}

func readIncremental(c *kc) {
	gate := filepath.Join(c.tempDir(), "gate")
	cmd := GateCommand(gate)
	task := c.startCmd(cmd)
	got := c.readUntil(task, "first\n", c.quick())
	if got != "first\n" {
		c.fatalf("reads of task %s (%q) before its gate opened gave %q, want %q", task.ID(), cmd, got, "first\n")
	}
	if r := c.read(task.ID()); r.Delta != "" || r.Lossy {
		c.errorf("a read of task %s after %q was delivered, with nothing new written, gave %q (lossy %v); want \"\": reads never repeat bytes", task.ID(), "first\n", r.Delta, r.Lossy)
	}
	if st := task.Status(); st != bash.TaskRunning {
		c.fatalf("task %s (%q) has status %q before its gate opened, want running", task.ID(), cmd, st)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		c.fatalf("cannot create the gate file: %v", err)
	}
	c.mustDone(task, c.quick(), "after its gate opened")
	c.wantFacts(task, completed(0), "")
	r := c.read(task.ID())
	if r.Delta != "second\n" || r.Lossy || r.OmittedBytes != 0 {
		c.errorf("the read of task %s after it ended gave %q (lossy %v, %d omitted); want %q, not lossy: reads go on after the task ends", task.ID(), r.Delta, r.Lossy, r.OmittedBytes, "second\n")
	}
	if r.Task != task {
		c.errorf("TaskRead.Task of task %s is not the *Task Start returned", task.ID())
	}
	for i := range 2 {
		if r := c.read(task.ID()); r.Delta != "" || r.Lossy {
			c.errorf("read %d of task %s after everything was delivered gave %q (lossy %v), want \"\"", i+3, task.ID(), r.Delta, r.Lossy)
		}
	}
}

func readMerge(c *kc) {
	tests := []struct{ command, want string }{
		{CmdOutErr, "out\n[stderr]\nerr\n"},
		{CmdErr, "[stderr]\nerr\n"},
		{CmdPrintfOutErr, "out\n[stderr]\nerr\n"},
		{CmdOut, "out\n"},
		{CmdPrintfOut, "out"},
		{CmdTrue, ""},
	}
	var tasks []*bash.Task
	for _, tt := range tests {
		tasks = append(tasks, c.startCmd(tt.command))
	}
	for i, tt := range tests {
		task := tasks[i]
		c.mustDone(task, c.quick(), "for a command that ends by itself")
		if r := c.read(task.ID()); r.Delta != tt.want {
			c.errorf("ReadOutput of %q after it ended = %q, want %q", tt.command, r.Delta, tt.want)
		}
		if r := c.read(task.ID()); r.Delta != "" {
			c.errorf("the second ReadOutput of %q after it ended = %q, want \"\": reads never repeat bytes", tt.command, r.Delta)
		}
	}
}

func readLossy(c *kc, toStderr bool) {
	limit := c.opts.MaxOutputBytes
	n := 4*limit/12 + 1
	want := Lines(n)
	cmd := LinesCommand(n, toStderr)
	task := c.startCmd(cmd)
	c.mustDone(task, c.quick(), "for a command that ends by itself")
	r := c.read(task.ID())
	text := r.Delta
	if toStderr {
		if !strings.HasPrefix(text, "[stderr]\n") {
			c.fatalf("ReadOutput of %q begins %q, want the [stderr] section", cmd, prefix(text))
		}
		text = strings.TrimPrefix(text, "[stderr]\n")
	} else if strings.Contains(text, "[stderr]") {
		c.errorf("ReadOutput of %q, which writes nothing to stderr, has a [stderr] section", cmd)
	}
	if !r.Lossy {
		c.errorf("ReadOutput of %q after %d bytes into a %d-byte cap is not lossy", cmd, len(want), limit)
	}
	checkLossyText(c, cmd, text, want, r.OmittedBytes)
	spill, other := r.StdoutSpill, r.StderrSpill
	stream := "StdoutSpill"
	if toStderr {
		spill, other, stream = other, spill, "StderrSpill"
	}
	if spill.Path == "" {
		c.errorf("ReadOutput of %q is lossy but its %s names no file", cmd, stream)
	}
	if other.Path != "" {
		c.errorf("ReadOutput of %q names a spill file %q for the stream that stayed under the cap", cmd, other.Path)
	}
	again := c.read(task.ID())
	if again.Delta != "" || again.Lossy || again.OmittedBytes != 0 {
		c.errorf("the next ReadOutput of %q gave %d bytes (lossy %v, %d omitted), want nothing", cmd, len(again.Delta), again.Lossy, again.OmittedBytes)
	}
	againSpill := again.StdoutSpill
	if toStderr {
		againSpill = again.StderrSpill
	}
	if againSpill != spill {
		c.errorf("the next ReadOutput of %q reports %s %+v, want %+v still: a stream's spill file is named on every read once it has one", cmd, stream, againSpill, spill)
	}
}

// checkLossyText checks the text of a lossy read of all of want: what was kept before the gap
// (a start of want, ended by a newline the read may add), one bash.DroppedMarker line for the
// omitted bytes, and what was kept after it (an end of want that starts at a line start), adding
// up to want. So no line of it is one the command never printed.
func checkLossyText(c *kc, cmd, text, want string, omitted int64) {
	marker := bash.DroppedMarker(omitted)
	before, after, ok := strings.Cut(text, marker)
	if !ok {
		c.errorf("ReadOutput of %q dropped %d bytes but its delta has no %q line where they were: a reader would take the lines on both sides of the gap for lines the command printed", cmd, omitted, strings.TrimSuffix(marker, "\n"))
		return
	}
	if !strings.HasPrefix(want, before) {
		if !strings.HasSuffix(before, "\n") || !strings.HasPrefix(want, before[:len(before)-1]) {
			c.errorf("ReadOutput of %q: the %d bytes before the dropped-bytes marker are not the start of the stream", cmd, len(before))
			return
		}
		before = before[:len(before)-1]
	}
	if !strings.HasSuffix(want, after) {
		c.errorf("ReadOutput of %q: the %d bytes after the dropped-bytes marker are not the end of the stream", cmd, len(after))
		return
	}
	if int64(len(before))+omitted+int64(len(after)) != int64(len(want)) {
		c.errorf("ReadOutput of %q delivered %d+%d bytes around the marker and reports %d omitted, which is not the %d bytes written", cmd, len(before), len(after), omitted, len(want))
	}
	if cut := len(want) - len(after); len(after) > 0 && want[cut-1] != '\n' {
		c.errorf("ReadOutput of %q resumes after the gap in the middle of a line (%q): that line was never printed", cmd, prefix(after))
	}
}

func prefix(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func readConcurrent(c *kc) {
	n := 200
	n = max(1, min(n, c.opts.MaxOutputBytes/12))
	want := Lines(n)
	cmd := LinesCommand(n, false)
	task := c.startCmd(cmd)
	c.mustDone(task, c.quick(), "for a command that ends by itself")
	const readers = 8
	deltas := make([]string, readers)
	c.parallel(readers, func(i int) { deltas[i] = c.read(task.ID()).Delta })
	var nonEmpty []string
	for _, d := range deltas {
		if d != "" {
			nonEmpty = append(nonEmpty, d)
		}
	}
	if len(nonEmpty) != 1 || nonEmpty[0] != want {
		total := 0
		for _, d := range nonEmpty {
			total += len(d)
		}
		c.errorf("%d concurrent reads of finished task %q got %d non-empty deltas, %d bytes in all; want one delta with the %d bytes written: reads of a task are serialised", readers, cmd, len(nonEmpty), total, len(want))
	}
}

func killRunning(c *kc) {
	task := c.startCmd(CmdSleep)
	if !c.mustKill(task.ID()) {
		c.errorf("Kill(%q) of a running task returned false, want true", task.ID())
	}
	if st := task.Status(); st != bash.TaskKilled {
		c.errorf("task %s: Status right after Kill returned = %q, want killed: Kill marks the task at once", task.ID(), st)
	}
	if c.mustKill(task.ID()) {
		c.errorf("a second Kill(%q) returned true, want false", task.ID())
	}
	c.mustDone(task, c.killLimit(), "after Kill")
	c.wantFacts(task, killedBy("SIGTERM"), ": Kill sends SIGTERM first")
	if c.mustKill(task.ID()) {
		c.errorf("Kill(%q) after the task ended returned true, want false", task.ID())
	}
}

func killTermTrapped(c *kc) {
	task := c.startCmd(CmdTrapTerm)
	c.readUntil(task, "armed\n", c.quick())
	begin := time.Now()
	if !c.mustKill(task.ID()) {
		c.errorf("Kill(%q) of a running task returned false, want true", task.ID())
	}
	c.mustDone(task, c.killLimit(), "after Kill of a task that ignores SIGTERM: SIGKILL follows after the grace period")
	took := time.Since(begin)
	c.wantFacts(task, killedBy("SIGKILL"), ": a task that ignores SIGTERM gets SIGKILL after the grace period")
	if took < c.opts.Grace {
		c.errorf("task %s (%q) ended %v after Kill, before the %v grace period: SIGKILL comes only after it", task.ID(), CmdTrapTerm, took, c.opts.Grace)
	}
}

func killTrapExit0(c *kc) {
	task := c.startCmd(CmdTrapExit)
	c.readUntil(task, "armed\n", c.quick())
	if !c.mustKill(task.ID()) {
		c.errorf("Kill(%q) of a running task returned false, want true", task.ID())
	}
	c.mustDone(task, c.killLimit(), "after Kill")
	c.wantFacts(task, facts{status: bash.TaskKilled, hasCode: true}, ": a task killed through the executor stays killed when it then exits 0")
}

func killFinished(c *kc) {
	task := c.startCmd(CmdTrue)
	c.mustDone(task, c.quick(), "for a command that ends by itself")
	if c.mustKill(task.ID()) {
		c.errorf("Kill(%q) of a finished task returned true, want false", task.ID())
	}
	c.wantFacts(task, completed(0), ": killing a finished task changes nothing")
}

func unknownID(c *kc) {
	c.startCmd(CmdTrue) // so that the table is not empty
	const id = bash.TaskID("bashtest-never-issued")
	var err error
	c.call("ReadOutput", c.quick(), func() { _, err = c.ex.ReadOutput(id) })
	c.wantUnknown("ReadOutput", id, err)
	c.call("Kill", c.quick(), func() { _, err = c.ex.Kill(id) })
	c.wantUnknown("Kill", id, err)
	if tok, ok := c.ownerOf(id); ok {
		c.errorf("OwnerOf(%q) of an id never issued = %q, true; want false", id, tok)
	}
}

func (c *kc) wantUnknown(method string, id bash.TaskID, err error) {
	var unknown *bash.UnknownTaskError
	want := `unknown bash task "` + string(id) + `"`
	switch {
	case err == nil:
		c.errorf("%s(%q) of an id never issued returned no error", method, id)
	case !errors.Is(err, bash.ErrUnknownTask):
		c.errorf("%s(%q) of an id never issued returned %q, which does not match bash.ErrUnknownTask", method, id, err)
	case !errors.As(err, &unknown) || unknown.ID != id:
		c.errorf("%s(%q) of an id never issued returned %q, which is not a *bash.UnknownTaskError for that id", method, id, err)
	case !strings.Contains(err.Error(), want):
		c.errorf("%s(%q) returned %q, want the message %s", method, id, err, want)
	}
}

func ownerTokens(c *kc) {
	tests := []struct {
		name  string
		owner bash.OwnerToken
	}{
		{"a token", "agent-1"},
		{"an odd token", " multi\nline ü \"quoted\" "},
		{"no owner (the empty token)", ""},
	}
	var tasks []*bash.Task
	for _, tt := range tests {
		tasks = append(tasks, c.start(c.spec(CmdTrue, func(r *bash.Request) { r.Owner = tt.owner })))
	}
	check := func(when string) {
		for i, tt := range tests {
			got, ok := c.ownerOf(tasks[i].ID())
			switch {
			case tt.owner == "" && ok:
				c.errorf("OwnerOf(%q) %s = %q, true for a task started without an owner; want false", tasks[i].ID(), when, got)
			case tt.owner != "" && !ok:
				c.errorf("OwnerOf(%q) %s = false for a task started with %s %q; want it back, true", tasks[i].ID(), when, tt.name, tt.owner)
			case tt.owner != "" && got != tt.owner:
				c.errorf("OwnerOf(%q) %s = %q, want %q verbatim", tasks[i].ID(), when, got, tt.owner)
			}
		}
	}
	check("right after Start")
	for _, task := range tasks {
		c.mustDone(task, c.quick(), "for a command that ends by itself")
	}
	check("after the task ended")
}

//go:build linux

package ptyshell

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestStatePersistsAcrossRuns(t *testing.T) {
	s := startShell(t, Config{})
	dir := t.TempDir()
	steps := []struct {
		command string
		status  int
		want    string
	}{
		{"cd " + dir + " && mkdir nested && cd nested", 0, ""},
		{"export KEEP=loader; greet() { echo \"hello $1\"; }; alias ll='echo aliased'", 0, ""},
		{"pwd; echo keep=$KEEP", 0, dir + "/nested\nkeep=loader"},
		{"greet world", 0, "hello world"},
		{"ll", 0, "aliased"},
		{"sleep 60 & echo started >/dev/null", 0, "[1] %!"},
		{"jobs | grep -c sleep", 0, "1"},
		{"kill %1; wait %1; echo $?", 0, "[1]+  Terminated              sleep 60\n143"},
		{"false", 1, ""},
		{"echo out; (exit 7)", 7, "out"},
	}
	for _, st := range steps {
		r := run(t, s, st.command)
		if st.want == "[1] %!" {
			// Interactive bash announces a background job with its number and pid.
			if r.Outcome != Completed || !strings.HasPrefix(r.Output.text(), "[1] ") {
				t.Fatalf("job start: %+v", r)
			}
			continue
		}
		mustComplete(t, r, st.status, st.want)
	}
}

func TestMultilineQuotesAndHeredocs(t *testing.T) {
	s := startShell(t, Config{})
	cases := []struct {
		name, command, want string
	}{
		{"quotes across lines", "x='line one'\ny=\"it's fine\"\necho \"$x:$y\"", "line one:it's fine"},
		{"heredoc", "cat <<'EOF'\nalpha\nbeta\nEOF", "alpha\nbeta"},
		{"expanding heredoc", "v=42\ncat <<EOF\nv=$v\nEOF", "v=42"},
		{"backslash continuation", "echo one \\\n  two", "one two"},
		{"if block", "if true; then\n  echo yes\nelse\n  echo no\nfi", "yes"},
		{"unterminated heredoc", "cat <<EOF\nbody", "delimited by end-of-file (wanted `EOF')\nbody"},
		{"unclosed quote", "echo \"unclosed", "bash: unexpected EOF while looking for matching `\"'"},
		{"literal tab and control characters", "printf '%s|' \"a\tb\" \"c\x03d\" \"e\x15f\" \"g\x17h\" | od -An -c | tr -s ' '", " a \\t b | c 003 d | e 025 f | g 027 h |"},
		{"history characters", "echo 'wow!' \"!!\" ^a^b", "wow! !! ^a^b"},
		{"utf-8 and single quotes", "echo 'héllo — ünïcode'; echo \"it's\"", "héllo — ünïcode\nit's"},
		{"carriage return in command", "printf 'a\\rb\\n'", "a\nb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, s, c.command)
			got := r.Output.text()
			if c.name == "unterminated heredoc" && strings.HasPrefix(got, "bash: warning: here-document at line ") {
				got = got[strings.Index(got, "delimited"):] // the line number counts the shell's input
			}
			if r.Outcome != Completed || got != c.want {
				t.Fatalf("got %v %q; want completed %q", r.Outcome, r.Output.text(), c.want)
			}
		})
	}
	// The syntax errors above left the shell usable and its state intact.
	mustComplete(t, run(t, s, "echo $v"), 0, "42")
}

func TestLongOutputClippedHeadAndTail(t *testing.T) {
	s := startShell(t, Config{MaxOutputChars: 2000})
	r := run(t, s, "seq 1 100000")
	if r.Outcome != Completed || r.ExitCode != 0 {
		t.Fatalf("got %v status %d", r.Outcome, r.ExitCode)
	}
	o := r.Output
	if !strings.HasPrefix(o.Head, "1\n2\n3\n") || !strings.HasSuffix(o.Tail, "99999\n100000") {
		t.Fatalf("head %q… tail …%q", o.Head[:20], o.Tail[len(o.Tail)-20:])
	}
	if n := utf8.RuneCountInString(o.Head) + utf8.RuneCountInString(o.Tail); n > 2000 {
		t.Fatalf("kept %d runes, budget 2000", n)
	}
	// seq 1 100000 prints 588895 bytes; the trailing newline is trimmed from the result.
	total := int64(588895 - 1)
	if got := int64(len(o.Head)+len(o.Tail)) + o.OmittedChars; got != total {
		t.Fatalf("head+tail+omitted = %d, want %d", got, total)
	}
	if o.OmittedLines < 99000 {
		t.Fatalf("omitted lines %d", o.OmittedLines)
	}
}

func TestExecBashAndExit(t *testing.T) {
	s := startShell(t, Config{})
	// A shell that replaced itself with another bash is a program waiting for input: it gets
	// none of our settings (nothing is exported), and ends at end-of-file.
	r := run(t, s, "exec env PS1='inner> ' bash --norc --noprofile")
	if r.Outcome != ShellExited || r.Exit != (Exit{Known: true, Code: 0}) || r.StdinEOFs != 1 || r.Output.text() != "inner> exit" {
		t.Fatalf("exec bash: got %+v", r)
	}
	s = startShell(t, Config{})
	r = run(t, s, "echo bye; exit 3")
	if r.Outcome != ShellExited || r.Exit != (Exit{Known: true, Code: 3}) || !strings.HasPrefix(r.Output.text(), "bye") {
		t.Fatalf("exit: got %+v", r)
	}
	if !s.Exited() {
		t.Fatal("shell not reported exited")
	}
	r, err := s.Run(context.Background(), "echo again")
	if err != nil || r.Outcome != ShellExited {
		t.Fatalf("Run after exit: %+v, %v", r, err)
	}
}

// TestNestedShellsCannotTakeOver checks that a shell started inside ours (bash, su, nix-shell,
// pipenv shell) is a program waiting for input: none of our settings reach it, not even when a
// command exports them, so its prompt is never taken for ours, and ours keeps its state.
func TestNestedShellsCannotTakeOver(t *testing.T) {
	s := startShell(t, Config{})
	run(t, s, "KEEP=outer")
	for _, nested := range []string{
		"bash",
		"bash --norc --noprofile -i",
		"export PS1 PS2 PROMPT_COMMAND; bash --norc --noprofile",
		"set -a; PS1=$PS1; bash --norc --noprofile; set +a",
	} {
		r := run(t, s, nested+"; echo back=$?")
		if r.Outcome != Completed || r.StdinEOFs != 1 || !strings.HasSuffix(r.Output.text(), "exit\nback=0") {
			t.Fatalf("%q: got %+v", nested, r)
		}
		mustComplete(t, run(t, s, "echo $KEEP $$"), 0, "outer "+strconv.Itoa(s.Pid()))
	}
}

// TestTokenStaysInTheShell checks that the shell's token, which marks its prompts, is in no
// environment a command's programs get, not even under set -a.
func TestTokenStaysInTheShell(t *testing.T) {
	s := startShell(t, Config{})
	for _, command := range []string{"env", "bash -c 'echo \"[$PS1|$PS2|$PROMPT_COMMAND|$IGNOREEOF]\"'", "set -a", "env; set +a", "cat /proc/self/environ | tr '\\0' '\\n'"} {
		r := run(t, s, command)
		if r.Outcome != Completed || strings.Contains(r.Output.text(), s.token) {
			t.Fatalf("%q: got %v, output holds the token: %q", command, r.Outcome, r.Output.text())
		}
	}
	mustComplete(t, run(t, s, "bash -c 'echo \"[$PS1|$PS2|$PROMPT_COMMAND|$IGNOREEOF]\"'"), 0, "[|||]")
	if _, err := os.Stat(filepath.Join(s.dir, "setup")); !os.IsNotExist(err) {
		t.Fatalf("set-up file left after start: %v", err)
	}
}

func TestShellKilledBySignal(t *testing.T) {
	s := startShell(t, Config{})
	r := run(t, s, "echo before; kill -KILL $$")
	if r.Outcome != ShellExited || r.Exit.Signal != "SIGKILL" || r.Output.text() != "before" {
		t.Fatalf("got %+v", r)
	}
}

func TestExecOfProgramThatEnds(t *testing.T) {
	s := startShell(t, Config{})
	r := run(t, s, "exec printf 'last words\\n'")
	if r.Outcome != ShellExited || r.Exit != (Exit{Known: true, Code: 0}) || r.Output.text() != "last words" {
		t.Fatalf("got %+v", r)
	}
}

func TestInterrupt(t *testing.T) {
	cases := []struct{ name, command string }{
		{"sleep", "echo started; sleep 60; echo never"},
		{"raw mode without signal keys", "stty raw -isig; echo started; sleep 60; echo never"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startShell(t, Config{})
			run(t, s, "X=still")
			type out struct {
				r   Result
				err error
			}
			done := make(chan out, 1)
			go func() {
				r, err := s.Run(context.Background(), c.command)
				done <- out{r, err}
			}()
			waitFor(t, "sleep to start", func() bool { return hasDescendant(s.pid, "sleep") })
			if err := s.Interrupt(); err != nil {
				t.Fatal(err)
			}
			o := <-done
			if o.err != nil || o.r.Outcome != AtPrompt || o.r.Output.text() != "started" {
				t.Fatalf("got %+v, %v; want at prompt with output \"started\"", o.r, o.err)
			}
			mustComplete(t, run(t, s, "stty sane; echo $X"), 0, "still")
		})
	}
}

func hasDescendant(root int, comm string) bool {
	for _, st := range descendants(root) {
		data, _ := os.ReadFile("/proc/" + strconv.Itoa(st.PID) + "/comm")
		if strings.TrimSpace(string(data)) == comm {
			return true
		}
	}
	return false
}

func TestStdinWaitIsAnsweredWithEOF(t *testing.T) {
	python, _ := exec.LookPath("python3")
	cases := []struct {
		name, command string
		status        int
		want          string
		eofs          int
		interrupted   bool
		killed        bool
	}{
		{name: "cat", command: "cat; echo after", want: "after", eofs: 1},
		{name: "read builtin", command: "read x; echo status=$? x=$x", want: "status=1 x=", eofs: 1},
		{name: "two readers", command: "read a; read b; echo done", want: "done", eofs: 2},
		{name: "pipeline reading the terminal", command: "cat | wc -l", want: "0", eofs: 1},
		{name: "reader of /dev/tty", command: "head -c 5 /dev/tty; echo tty-done", want: "tty-done", eofs: 1},
		{name: "the shell's line editor (read -e)", command: "read -e -p 'path: ' x; echo status=$?", want: "path: status=1", eofs: 1},
		{name: "reader that ignores end-of-file", command: "while :; do read -r x; done", want: "", eofs: 3, interrupted: true},
		{name: "reader that ignores SIGINT", command: "trap '' INT; sh -c 'trap \"\" INT; while :; do read x; done'; echo survived", want: "Killed\nsurvived", eofs: 3, interrupted: true, killed: true},
	}
	if python != "" {
		cases = append(cases, struct {
			name, command string
			status        int
			want          string
			eofs          int
			interrupted   bool
			killed        bool
		}{name: "python REPL", command: "python3 -q; echo rc=$?", want: ">>> \nrc=0", eofs: 1})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startShell(t, Config{})
			r := run(t, s, c.command)
			if c.interrupted && !c.killed {
				// SIGINT aborts the whole line: the shell returns to its prompt.
				if r.Outcome != AtPrompt {
					t.Fatalf("got %v, want at prompt", r.Outcome)
				}
			} else if r.Outcome != Completed || r.ExitCode != c.status || r.Output.text() != c.want {
				t.Fatalf("got %v status %d output %q; want status %d output %q", r.Outcome, r.ExitCode, r.Output.text(), c.status, c.want)
			}
			if r.StdinEOFs != c.eofs || r.Interrupted != c.interrupted || r.Killed != c.killed {
				t.Fatalf("answers: eofs %d interrupted %v killed %v; want %d %v %v", r.StdinEOFs, r.Interrupted, r.Killed, c.eofs, c.interrupted, c.killed)
			}
			mustComplete(t, run(t, s, "echo ok"), 0, "ok")
		})
	}
}

func TestContinuationPromptIsInterrupted(t *testing.T) {
	s := startShell(t, Config{})
	run(t, s, "KEEP=yes")
	// A wrapper line cannot leave bash at PS2 (the command is one quoted word), so type raw
	// incomplete lines, as a broken wrapper would, through the same loop Run uses.
	for _, raw := range []string{"echo \"unclosed", "cat <<EOF", "echo trailing \\", "if true; then"} {
		s.runMu.Lock()
		r, err := s.runLine(context.Background(), newNonce(), raw)
		s.runMu.Unlock()
		if err != nil || r.Outcome != Continuation || r.Output.text() != "" {
			t.Fatalf("%q: got %+v, %v; want continuation", raw, r, err)
		}
		mustComplete(t, run(t, s, "echo $KEEP"), 0, "yes")
	}
}

func TestAliasesCannotBreakTheWrapper(t *testing.T) {
	s := startShell(t, Config{})
	run(t, s, "alias printf='echo \"'; alias eval='echo \"'; alias builtin='echo \"'")
	mustComplete(t, run(t, s, "echo wrapper unaffected"), 0, "wrapper unaffected")
	r := run(t, s, "printf")
	if r.Outcome != Completed || r.ExitCode != 2 || !strings.Contains(r.Output.text(), "unexpected EOF") {
		t.Fatalf("the alias itself: %+v", r)
	}
}

func TestMarkerSpoofing(t *testing.T) {
	s := startShell(t, Config{})
	cases := []struct{ name, command, want string }{
		{"foreign end marker", "printf '__DSH_END_0000000000000000:0\\n'; echo real", "__DSH_END_0000000000000000:0\nreal"},
		{"foreign start marker", "printf '__DSH_START_abc__\\n'; echo real", "__DSH_START_abc__\nreal"},
		{"prompt escape without token", "printf '\\033]133;D;0\\007dsh> '; sleep 0.2; echo real", "dsh> real"},
		{"continuation escape without token", "printf '\\033]133;dsh-ps2\\007> '; echo real", "> real"},
		{"xtrace shows the wrapper", "set -x; echo traced; set +x", "++ echo traced\ntraced\n++ set +x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, s, c.command)
			if r.Outcome != Completed || r.Output.text() != c.want {
				t.Fatalf("got %v %q, want completed %q", r.Outcome, r.Output.text(), c.want)
			}
			if strings.Contains(r.Output.text(), s.token) {
				t.Fatalf("output holds the shell token")
			}
		})
	}
	// A command that prints our own marker cannot know the nonce of its run: the marker it
	// reads from history is the previous run's (and history is off anyway).
	mustComplete(t, run(t, s, "history | wc -l"), 0, "0")
}

func TestPromptCommandAndPS1Changes(t *testing.T) {
	s := startShell(t, Config{})
	mustComplete(t, run(t, s, "PS1='custom> '"), 0, "")
	mustComplete(t, run(t, s, "echo \"healed=[${PS1: -5}]\""), 0, "healed=["+Prompt+"]")
	// Without PROMPT_COMMAND there is no prompt marker; the shell reading the terminal after
	// the end marker is recognised as its prompt.
	mustComplete(t, run(t, s, "unset PROMPT_COMMAND"), 0, "")
	mustComplete(t, run(t, s, "echo still works"), 0, "still works")
	mustComplete(t, run(t, s, "false"), 1, "")
	// Nor is the displayed PS1 needed: the shell waiting in its line editor is its prompt.
	mustComplete(t, run(t, s, "PS1='custom> '"), 0, "")
	mustComplete(t, run(t, s, "echo works without PS1"), 0, "works without PS1")
	mustComplete(t, run(t, s, "(exit 3)"), 3, "")
}

func TestBadOutputIsSanitizedAndBounded(t *testing.T) {
	s := startShell(t, Config{MaxOutputChars: 4000})
	cases := []struct {
		name, command string
		check         func(Output) error
	}{
		{"NUL bytes", `printf 'a\0b\0c'`, want("abc")},
		{"CRLF text", `printf 'one\r\ntwo\r\n\r\nfour\r\n'`, want("one\ntwo\n\nfour")},
		{"invalid UTF-8", `printf 'x\xff\xfey\xe2\x82'; echo`, want("x\uFFFD\uFFFDy\uFFFD\uFFFD")},
		{"ANSI colours and cursor motion", `printf '\033[1;31mred\033[0m \033[2J\033[Hmoved\033]0;title\007 done'`, want("red moved done")},
		{"binary", `head -c 200000 /dev/urandom`, clean},
		{"escape storm", `for i in $(seq 1 20000); do printf '\033[%d;%dH\033[38;5;%dm#' $i $i $((i%256)); done; printf '\033]8;;http://x\033\\link\033]8;;\033\\'`, func(o Output) error {
			if err := clean(o); err != nil {
				return err
			}
			if !strings.HasSuffix(o.Tail, "#link") || !strings.HasPrefix(o.Head, "###") {
				return fmt.Errorf("head %.20q tail %.20q", o.Head, o.Tail)
			}
			return nil
		}},
		{"10 MB single line", `head -c 10000000 /dev/zero | tr '\0' x; echo; echo end`, func(o Output) error {
			if err := clean(o); err != nil {
				return err
			}
			if !strings.HasPrefix(o.Head, "xxxx") || !strings.HasSuffix(o.Tail, "xxx\nend") || o.OmittedChars < 9_990_000 {
				return fmt.Errorf("head %.20q tail %.20q omitted %d", o.Head, o.Tail, o.OmittedChars)
			}
			return nil
		}},
		{"unterminated OSC swallows only its own payload", `printf 'before\033]0;'; head -c 10000 /dev/zero | tr '\0' t; printf '\007after'`, want("beforeafter")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, s, c.command)
			if r.Outcome != Completed {
				t.Fatalf("outcome %v", r.Outcome)
			}
			if n := utf8.RuneCountInString(r.Output.Head) + utf8.RuneCountInString(r.Output.Tail); n > 4000 {
				t.Fatalf("kept %d runes", n)
			}
			if err := c.check(r.Output); err != nil {
				t.Fatal(err)
			}
		})
	}
	mustComplete(t, run(t, s, "echo fine"), 0, "fine")
}

func want(s string) func(Output) error {
	return func(o Output) error {
		if o.text() != s {
			return fmt.Errorf("got %q, want %q", o.text(), s)
		}
		return nil
	}
}

// clean checks the output is valid UTF-8 without controls other than newline and tab.
func clean(o Output) error {
	for _, s := range []string{o.Head, o.Tail} {
		if !utf8.ValidString(s) {
			return errors.New("invalid UTF-8 in output")
		}
		for _, r := range s {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
				return fmt.Errorf("control %U in output", r)
			}
		}
	}
	return nil
}

func TestContextEndReturnsPartialOutput(t *testing.T) {
	s := startShell(t, Config{})
	ctx, cancel := context.WithTimeoutCause(context.Background(), 300*time.Millisecond, errors.New("deadline for test"))
	defer cancel()
	r, err := s.Run(ctx, "echo partial; sleep 30")
	if err == nil || err.Error() != "deadline for test" {
		t.Fatalf("err = %v, want the context's cause", err)
	}
	if r.Output.text() != "partial" {
		t.Fatalf("partial output %q", r.Output.text())
	}
	if _, err := s.Run(context.Background(), "true"); !errors.Is(err, ErrBroken) {
		t.Fatalf("Run after a cancelled Run: %v, want ErrBroken", err)
	}
	if _, err := s.Run(ctx, "true"); !errors.Is(err, ErrBroken) {
		t.Fatalf("Run with an ended context: %v", err)
	}
}

func TestRunRefusals(t *testing.T) {
	s := startShell(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Run(ctx, "true"); !errors.Is(err, context.Canceled) {
		t.Fatalf("pre-cancelled Run: %v", err)
	}
	mustComplete(t, run(t, s, "echo usable"), 0, "usable")

	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Run(context.Background(), "touch "+filepath.Join(t.TempDir(), "x")+"; sleep 60")
		close(started)
		done <- err
	}()
	waitFor(t, "sleep", func() bool { return hasDescendant(s.pid, "sleep") })
	if _, err := s.Run(context.Background(), "true"); !errors.Is(err, ErrBusy) {
		t.Fatalf("concurrent Run: %v, want ErrBusy", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run interrupted by Close: %v", err)
	}
	if r, err := s.Run(context.Background(), "true"); err != nil || r.Outcome != ShellExited {
		t.Fatalf("Run after Close: %+v, %v", r, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseKillsEveryProcess(t *testing.T) {
	s := startShell(t, Config{})
	dir := t.TempDir()
	// Each escapee writes its pid to a file, then ignores SIGTERM and SIGHUP and sleeps.
	spawn := map[string]string{
		"job":         "(trap '' TERM HUP; echo $BASHPID > %s; exec sleep 300) &",
		"nohup":       "nohup bash -c 'trap \"\" TERM HUP; echo $$ > %s; exec sleep 300' >/dev/null 2>&1 &",
		"setsid":      "setsid bash -c 'trap \"\" TERM HUP; echo $$ > %s; exec sleep 300' >/dev/null 2>&1 &",
		"double fork": "( (setsid bash -c 'trap \"\" TERM HUP; echo $$ > %s; exec sleep 300' </dev/null >/dev/null 2>&1 &) )",
		"disowned":    "bash -c 'trap \"\" TERM HUP; echo $$ > %s; exec sleep 300' & disown",
	}
	var files []string
	for name, tmpl := range spawn {
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		files = append(files, f)
		if r := run(t, s, fmt.Sprintf(tmpl, f)); r.Outcome != Completed || r.ExitCode != 0 {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	var pids []int
	for _, f := range files {
		waitFor(t, "pid file "+f, func() bool {
			data, err := os.ReadFile(f)
			return err == nil && strings.HasSuffix(string(data), "\n")
		})
		data, _ := os.ReadFile(f)
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "sleep to start", func() bool {
			c, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
			return strings.TrimSpace(string(c)) == "sleep"
		})
		pids = append(pids, pid)
	}
	// The double-forked escapee was re-parented to this process, not to the shell.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d survived Close", pid)
		}
	}
}

func TestTwoShellsInParallel(t *testing.T) {
	a := startShell(t, Config{})
	b := startShell(t, Config{})
	flag := filepath.Join(t.TempDir(), "flag")
	var wg sync.WaitGroup
	var ra, rb Result
	wg.Go(func() { ra = run(t, a, "while [ ! -e "+flag+" ]; do sleep 0.01; done; echo a saw flag") })
	wg.Go(func() { rb = run(t, b, "touch "+flag+"; echo b made flag") })
	wg.Wait()
	mustComplete(t, ra, 0, "a saw flag")
	mustComplete(t, rb, 0, "b made flag")
	mustComplete(t, run(t, a, "echo $$"), 0, strconv.Itoa(a.Pid()))
	mustComplete(t, run(t, b, "echo $$"), 0, strconv.Itoa(b.Pid()))
}

func TestStartFailures(t *testing.T) {
	checkLeaks(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Start(ctx, Config{Bash: "/nonexistent/bash"}); err == nil || !strings.Contains(err.Error(), "start bash") {
		t.Fatalf("missing binary: %v", err)
	}
	script := func(body string) string {
		path := filepath.Join(t.TempDir(), "fake-bash")
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	if _, err := Start(ctx, Config{Bash: script("exit 4")}); err == nil || !strings.Contains(err.Error(), "exited during startup") {
		t.Fatalf("shell that exits: %v", err)
	}
	short, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	if _, err := Start(short, Config{Bash: script("exec sleep 30")}); err == nil || !strings.Contains(err.Error(), "did not reach its prompt") {
		t.Fatalf("shell without prompt: %v", err)
	}
	if _, err := Start(ctx, Config{MaxOutputChars: -1}); err == nil {
		t.Fatal("negative MaxOutputChars accepted")
	}
	if _, err := Start(ctx, Config{Dir: "/nonexistent/dir"}); err == nil {
		t.Fatal("missing directory accepted")
	}
}

func TestLongCommandsGoThroughAFile(t *testing.T) {
	s := startShell(t, Config{})
	body := strings.Repeat("line with 'quotes', \"doubles\", $dollars, tabs\tand é\n", 4000)
	r := run(t, s, "X=set-before\ncat <<'EOF' | md5sum\n"+body+"EOF\n")
	mustComplete(t, r, 0, fmt.Sprintf("%x  -", md5.Sum([]byte(body))))
	if s.staged != 1 {
		t.Fatalf("%d commands staged, want the long one", s.staged)
	}
	// State set by a staged command persists; the staging file is gone after the run.
	mustComplete(t, run(t, s, "echo $X; ls -A "+s.dir+" | wc -l"), 0, "set-before\n0")
	r = run(t, s, strings.Repeat("# padding\n", 100)+"echo long; exit 5")
	if r.Outcome != ShellExited || r.Exit.Code != 5 || !strings.HasPrefix(r.Output.text(), "long") {
		t.Fatalf("exit in a long command: %+v", r)
	}
	if _, err := os.Stat(s.dir); !os.IsNotExist(err) {
		t.Fatalf("stage directory left after the shell closed: %v", err)
	}
}

// TestLostShellIsClosedAtOnce checks that a shell which can no longer be followed is reported
// lost, and closed, as soon as it waits: not answered as a command waiting for input, with the
// next command waiting for its whole deadline.
func TestLostShellIsClosedAtOnce(t *testing.T) {
	cases := []struct {
		name, command string
		reason        LostReason
		output        string // "write error" stands for bash's complaint about a closed stdout
		eofs          int
	}{
		{"output to /dev/null", "echo before; exec >/dev/null 2>&1", LostRedirected, "before", 0},
		{"output to a log", "exec >log 2>&1; echo logged", LostRedirected, "", 0},
		{"stdout closed", "exec 1>&-", LostRedirected, "write error", 0},
		{"function named builtin", "echo before; builtin() { :; }", LostPrompt, "before", 0},
		{"DEBUG trap under extdebug", "shopt -s extdebug; trap false DEBUG", LostPrompt, "", 0},
		{"the shell keeps reading", "trap '' INT; while :; do read x; done", LostReading, "", 3},
		{"suspend", "echo before; suspend -f", LostStopped, "before", 0},
		{"SIGSTOP", "kill -STOP $$", LostStopped, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := startShell(t, Config{})
			r := run(t, s, c.command)
			out := r.Output.text()
			if c.output == "write error" {
				if !strings.Contains(out, "write error") {
					t.Errorf("output %q, want bash's write errors", out)
				}
			} else if out != c.output {
				t.Errorf("output %q, want %q", out, c.output)
			}
			if r.Outcome != Lost || r.Lost != c.reason || r.StdinEOFs != c.eofs || strings.Contains(out, Prompt) {
				t.Fatalf("got %v (%v), %d end-of-files, output %q; want lost (%v), %d, no prompt", r.Outcome, r.Lost, r.StdinEOFs, out, c.reason, c.eofs)
			}
			if !s.Exited() {
				t.Fatal("a lost shell is still running")
			}
			if r, err := s.Run(context.Background(), "echo next"); err != nil || r.Outcome != ShellExited {
				t.Fatalf("Run after a lost shell: %+v, %v", r, err)
			}
		})
	}
}

// TestShellThatReplacedItselfIsAProgram checks that a shell which exec'd another program is
// answered like any program waiting for input, even one that waits the way a line editor does,
// and is not taken for our shell at its prompt.
func TestShellThatReplacedItselfIsAProgram(t *testing.T) {
	s := startShell(t, Config{})
	r := run(t, s, "exec bash --noprofile --norc -c 'read -e x; echo status=$?'")
	if r.Outcome != ShellExited || r.StdinEOFs != 1 || r.Output.text() != "status=1" {
		t.Fatalf("got %+v", r)
	}
}

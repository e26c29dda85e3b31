package launcher

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/envpolicy"
)

// local is a Channel that runs the command on this machine. It feeds stdin through a pipe of its
// own, so that it returns when the command exits (exec.Cmd would wait for stdin's EOF).
func local(ctx context.Context, cmd Command, stdin io.Reader) ([]byte, error) {
	c := exec.CommandContext(ctx, cmd.Argv[0], cmd.Argv[1:]...)
	if stdin != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		defer r.Close()
		go func() { // ends when Stop closes its end of stdin
			_, _ = io.Copy(w, stdin)
			w.Close()
		}()
		c.Stdin = r
	}
	return c.Output()
}

// gone reports whether pid is no longer a live process (absent or a zombie).
func gone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	s = s[strings.LastIndex(s, ")")+2:]
	return strings.HasPrefix(s, "Z") || strings.HasPrefix(s, "X")
}

// TestStopOverChannel stops a process group and an escapee that left it (setsid) through the
// controller over a Channel: both must be gone when Stop returns, and Check must then report the
// group dead.
func TestStopOverChannel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the escapee sweep needs /proc")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed:", err)
	}
	pf := filepath.Join(t.TempDir(), "escapee")
	cmd := exec.Command(bash, "-c", "trap '' TERM; setsid sleep 600 & echo $! >"+Quote(pf)+"; sleep 600 & wait")
	cmd.Env = append(os.Environ(), envpolicy.TagVar+"=tt-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} // its own session: the controller stops the whole session of a group it stops
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var escapee int
	for deadline := time.Now().Add(10 * time.Second); escapee == 0; {
		if b, err := os.ReadFile(pf); err == nil && strings.HasSuffix(string(b), "\n") {
			escapee, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never wrote the escapee's pid")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := Control{Name: "dsh-test-control", Bash: bash, Marker: "MK", Grace: 200 * time.Millisecond,
		Own: OwnPattern("tt"), Sweep: TagsPattern([]string{"tt-1"}), Targets: []Target{{PGID: cmd.Process.Pid, Tag: "tt-1"}}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if u, err := Stop(ctx, local, c, nil); err != nil || len(u) != 0 {
		t.Fatalf("Stop = %v, %v", u, err)
	}
	<-waited
	if !gone(escapee) {
		_ = syscall.Kill(escapee, syscall.SIGKILL)
		t.Errorf("the escapee %d (setsid) outlived Stop", escapee)
	}
	alive, err := Check(ctx, local, c)
	if err != nil || alive[cmd.Process.Pid] {
		t.Errorf("Check after Stop = %v, %v; want the group dead", alive, err)
	}
	if _, err := Stop(ctx, func(context.Context, Command, io.Reader) ([]byte, error) { return []byte("noise"), nil }, c, nil); err == nil {
		t.Error("Stop accepted output with no report")
	}
}

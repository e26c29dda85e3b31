package proctree_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/proctree"
)

// TestStopperWait: Wait returns true once a tree that heeds SIGTERM is gone (Killing stays open),
// and returns once SIGKILL went to a tree that ignores SIGTERM past the grace period (Killing is
// closed by then; true only if the tree was already seen gone too).
func TestStopperWait(t *testing.T) {
	const grace = 300 * time.Millisecond
	tests := []struct {
		name   string
		script string
		heeds  bool
	}{
		{"heeds SIGTERM", "sleep 60 & echo ready; wait", true},
		{"ignores SIGTERM", "trap '' TERM; sleep 60 & echo ready; wait", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("bash", "-c", tt.script)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			release := startOwned(t, cmd)
			defer release()
			exited := make(chan struct{})
			go func() { cmd.Wait(); close(exited) }()
			var buf [6]byte
			if n, _ := out.Read(buf[:]); !strings.HasPrefix(string(buf[:n]), "ready") {
				t.Fatalf("read %q, want ready", buf[:n])
			}
			pgid := cmd.Process.Pid
			s := proctree.NewStopper(proctree.Tree{Leader: pgid, Group: pgid}, proctree.StopOptions{Grace: grace, LeaderExited: exited, Reap: true})
			begin := time.Now()
			gone := s.Wait(nil)
			took := time.Since(begin)
			if tt.heeds && !gone {
				t.Errorf("Wait = false after %v, want true: the tree heeds SIGTERM", took)
			}
			select {
			case <-s.Killing():
				if tt.heeds {
					t.Error("Killing closed for a tree that heeded SIGTERM")
				}
				if took < grace {
					t.Errorf("SIGKILL after %v, before the %v grace period", took, grace)
				}
			default:
				if !tt.heeds {
					t.Errorf("Wait returned %v after %v with Killing open: the tree ignores SIGTERM", gone, took)
				}
			}
			if gone && groupAlive(pgid) {
				t.Errorf("group %d has members after Wait reported it gone", pgid)
			}
			<-s.Stopped()
		})
	}
}

// groupAlive reports whether process group pgid has a member that is not a zombie.
func groupAlive(pgid int) bool {
	s := proctree.NewStopper(proctree.Tree{Group: pgid}, proctree.StopOptions{})
	for _, st := range s.Members() {
		if !st.Dead() {
			return true
		}
	}
	return false
}

// TestTagSurvivesExec: once a scan has seen a process carry its tag, an exec that drops the tag
// (env -u, env -i) does not hide it from the next scans: its environment was read at first sight.
func TestTagSurvivesExec(t *testing.T) {
	tag := "PROCTREE_TEST_TAG=exec-" + strconv.Itoa(os.Getpid())
	cmd := exec.Command("bash", "-c", `read -r; exec env -i sleep 60`)
	cmd.Env = append(os.Environ(), tag)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	release := startOwned(t, cmd)
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		release()
	}()
	pid := cmd.Process.Pid
	s := proctree.NewStopper(proctree.Tree{Tag: tag}, proctree.StopOptions{})
	waitFor(t, "the tagged process to be seen", func() bool { return member(s, pid) })
	in.Close() // bash reads EOF and execs sleep with an empty environment
	waitFor(t, "the exec that drops the tag", func() bool {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		return err == nil && strings.HasPrefix(string(b), "sleep\x00")
	})
	if proctree.HasTag(pid, tag, false) {
		t.Fatal("the exec kept the tag; the test needs it dropped")
	}
	// A new stopper, so that the first one's memory of its members does not answer.
	if !member(proctree.NewStopper(proctree.Tree{Tag: tag}, proctree.StopOptions{}), pid) {
		t.Errorf("process %d, seen with its tag, is no member once it exec'd without it", pid)
	}
}

func member(s *proctree.Stopper, pid int) bool {
	for _, st := range s.Members() {
		if st.PID == pid {
			return true
		}
	}
	return false
}

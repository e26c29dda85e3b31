package sandboxtest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type testCase struct {
	name  string
	needs string // "probe", "offline", "setuid", "go", "git", "persistent" or ""
	check func(c *kc)
}

func (tc testCase) skip(o Options) string {
	switch {
	case tc.needs == "probe" && !o.Probe:
		return "needs Options.Probe"
	case tc.needs == "offline" && o.Network:
		return "the policy lets the network on"
	case tc.needs == "setuid" && (o.Setuid == "" || os.Geteuid() == 0):
		return "needs Options.Setuid and an unprivileged test"
	case tc.needs == "go" && !o.Go, tc.needs == "git" && !o.Git:
		return "needs Options." + strings.ToUpper(tc.needs[:1]) + tc.needs[1:]
	case tc.needs == "persistent" && !o.Persistent:
		return "needs Options.Persistent"
	}
	return ""
}

// cases is the kit, escapes first, then the work that must keep working.
var cases = []testCase{
	{name: "write/plain", check: writePlain},
	{name: "write/symlink-made-inside", check: writeSymlinkInside},
	{name: "write/symlink-planted", check: writeSymlinkPlanted},
	{name: "write/hard-link", check: writeHardLink},
	{name: "write/rename-out", check: writeRenameOut},
	{name: "write/rename-in", check: writeRenameIn},
	{name: "write/truncate", check: writeTruncate},
	{name: "write/proc-self-root", check: writeProcRoot},
	{name: "write/proc-self-cwd", check: writeProcCwd},
	{name: "write/dev-shm", check: writeDevShm},
	{name: "read/denied", check: readDenied},
	{name: "read/denied-through-symlink", check: readDeniedSymlink},
	{name: "net/tcp-loopback", needs: "offline", check: netTCP},
	{name: "net/udp-loopback", needs: "offline", check: netUDP},
	{name: "unix/pathname-socket", needs: "probe", check: unixPathname},
	{name: "unix/abstract-socket", needs: "probe", check: unixAbstract},
	{name: "signal/outside-process", check: signalOutside},
	{name: "signal/harness", check: signalHarness},
	{name: "ptrace/outside-process", needs: "probe", check: ptraceOutside},
	{name: "loosen/unshare", check: loosenUnshare},
	{name: "loosen/mount", check: loosenMount},
	{name: "loosen/nested-landlock", needs: "probe", check: loosenLandlock},
	{name: "loosen/setns", needs: "probe", check: loosenSetns},
	{name: "loosen/setuid", needs: "setuid", check: loosenSetuid},

	{name: "work/workspace", check: workWorkspace},
	{name: "work/tmpdir", check: workTmpdir},
	{name: "work/pipes-and-jobs", check: workPipes},
	{name: "work/go-build", needs: "go", check: workGoBuild},
	{name: "work/git", needs: "git", check: workGit},
	{name: "work/state-across-calls", needs: "persistent", check: workState},
}

func writePlain(c *kc) {
	res := c.run(`echo pwned > "$O/plain"`)
	c.absent(filepath.Join(c.O, "plain"), "a redirection", res)
}

func writeSymlinkInside(c *kc) {
	c.write(filepath.Join(c.O, "target"), "kept")
	res := c.run(`ln -s "$O/new" link && echo pwned > link; ln -s "$O/target" link2 && echo pwned >> link2`)
	c.absent(filepath.Join(c.O, "new"), "a symbolic link made in the workspace", res)
	c.unchanged(filepath.Join(c.O, "target"), "kept", "a symbolic link made in the workspace", res)
}

func writeSymlinkPlanted(c *kc) {
	c.write(filepath.Join(c.O, "target"), "kept")
	if err := os.Symlink(filepath.Join(c.O, "target"), filepath.Join(c.W, "planted")); err != nil {
		c.Fatal(err)
	}
	res := c.run(`echo pwned > planted`)
	c.unchanged(filepath.Join(c.O, "target"), "kept", "a symbolic link planted in the workspace", res)
}

func writeHardLink(c *kc) {
	c.write(filepath.Join(c.O, "target"), "kept")
	res := c.run(`ln "$O/target" hard; echo pwned >> hard`)
	c.unchanged(filepath.Join(c.O, "target"), "kept", "a hard link made in the workspace", res)
}

func writeRenameOut(c *kc) {
	res := c.run(`echo pwned > f && mv f "$O/moved"; mkdir d && mv d "$O/moved-dir"`)
	c.absent(filepath.Join(c.O, "moved"), "mv of a file", res)
	c.absent(filepath.Join(c.O, "moved-dir"), "mv of a directory", res)
}

func writeRenameIn(c *kc) {
	c.write(filepath.Join(c.O, "target"), "kept")
	res := c.run(`mv "$O/target" stolen; echo pwned >> stolen`)
	c.unchanged(filepath.Join(c.O, "target"), "kept", "mv into the workspace", res)
}

func writeTruncate(c *kc) {
	c.write(filepath.Join(c.O, "target"), "kept")
	res := c.run(`truncate -s 0 "$O/target"; : > "$O/target"`)
	c.unchanged(filepath.Join(c.O, "target"), "kept", "truncate", res)
}

func writeProcRoot(c *kc) {
	res := c.run(`echo pwned > "/proc/self/root$O/procroot"`)
	c.absent(filepath.Join(c.O, "procroot"), "/proc/self/root", res)
}

func writeProcCwd(c *kc) {
	res := c.run(`cd "$O" && echo pwned > /proc/self/cwd/proccwd; echo pwned > /proc/$$/cwd/proccwd2`)
	c.absent(filepath.Join(c.O, "proccwd"), "/proc/self/cwd after cd", res)
	c.absent(filepath.Join(c.O, "proccwd2"), "/proc/PID/cwd after cd", res)
}

func writeDevShm(c *kc) {
	name := "/dev/shm/dsh-sandboxtest-" + itoa(os.Getpid()) + "-" + filepath.Base(c.W)
	defer os.Remove(name)
	res := c.run(`echo pwned > ` + quote(name))
	c.absent(name, "a file in /dev/shm", res)
}

const secret = "dsh-sandboxtest-secret"

func readDenied(c *kc) {
	c.write(filepath.Join(c.D, "key"), secret)
	res := c.run(`cat "$D/key"; cp "$D/key" copy; cat copy; ls "$D"/*; for f in "$D"/*; do while read -r l; do echo "$l"; done < "$f"; done`)
	if strings.Contains(res.Output, secret) {
		c.Errorf("escape: a denied file was read: %q", res.Output)
	}
}

func readDeniedSymlink(c *kc) {
	c.write(filepath.Join(c.D, "key"), secret)
	if err := os.Symlink(filepath.Join(c.D, "key"), filepath.Join(c.W, "planted")); err != nil {
		c.Fatal(err)
	}
	res := c.run(`cat planted; ln -s "$D" dlink; cat dlink/key; cat "/proc/self/root$D/key"`)
	if strings.Contains(res.Output, secret) {
		c.Errorf("escape: a denied file was read through a link: %q", res.Output)
	}
}

func netTCP(c *kc) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		c.Fatal(err)
	}
	defer l.Close()
	port := itoa(l.Addr().(*net.TCPAddr).Port)
	res := c.run(`exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo pwned >&3`)
	l.(*net.TCPListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if conn, err := l.Accept(); err == nil {
		conn.Close()
		c.Errorf("escape: a TCP connection reached a listener outside the sandbox (output: %q)", res.Output)
	}
}

func netUDP(c *kc) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		c.Fatal(err)
	}
	defer pc.Close()
	port := itoa(pc.LocalAddr().(*net.UDPAddr).Port)
	res := c.run(`echo pwned > /dev/udp/127.0.0.1/` + port)
	pc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, _, err := pc.ReadFrom(make([]byte, 64)); err == nil {
		c.Errorf("escape: a UDP datagram (%d bytes) reached a socket outside the sandbox (output: %q)", n, res.Output)
	}
}

func unixPathname(c *kc) {
	dir := c.socketDir()
	path := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		c.Fatal(err)
	}
	defer l.Close()
	os.Chmod(path, 0o777) // let an unprivileged sandbox try: the permission is not what must stop it
	escaped, out := c.probe("connect-unix", path)
	l.(*net.UnixListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if conn, err := l.Accept(); err == nil || escaped {
		if conn != nil {
			conn.Close()
		}
		c.Errorf("escape: a Unix socket outside the sandbox was reached (probe: %q)", out)
	}
	gram := filepath.Join(dir, "gram")
	pc, err := net.ListenPacket("unixgram", gram)
	if err != nil {
		c.Fatal(err)
	}
	defer pc.Close()
	os.Chmod(gram, 0o777)
	escaped, out = c.probe("send-unixgram", gram)
	pc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, _, err := pc.ReadFrom(make([]byte, 64)); err == nil || escaped {
		c.Errorf("escape: a datagram reached a Unix socket outside the sandbox (probe: %q)", out)
	}
}

// socketDir returns the case's directory outside the sandbox for its Unix sockets: O, or, when
// a socket path in O would pass the kernel's 108-byte limit (a deep temporary directory), a
// fresh short directory in the system's temporary directory, removed when the case ends.
func (c *kc) socketDir() string {
	if len(filepath.Join(c.O, "sock")) < 100 {
		return c.O
	}
	dir, err := os.MkdirTemp("", "sbx")
	if err != nil {
		c.Fatal(err)
	}
	c.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		c.Fatal(err)
	}
	return dir
}

func unixAbstract(c *kc) {
	name := "@dsh-sandboxtest-" + itoa(os.Getpid()) + "-" + filepath.Base(c.W)
	l, err := net.Listen("unix", name)
	if err != nil {
		c.Fatal(err)
	}
	defer l.Close()
	escaped, out := c.probe("connect-unix", name)
	l.(*net.UnixListener).SetDeadline(time.Now().Add(100 * time.Millisecond))
	if conn, err := l.Accept(); err == nil || escaped {
		if conn != nil {
			conn.Close()
		}
		c.Errorf("escape: an abstract Unix socket outside the sandbox was reached (probe: %q)", out)
	}
}

// outsider starts a process outside the sandbox and returns it; the case's cleanup kills it.
func (c *kc) outsider() *exec.Cmd {
	c.Helper()
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		c.Fatal(err)
	}
	c.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func signalOutside(c *kc) {
	cmd := c.outsider()
	pid := itoa(cmd.Process.Pid)
	res := c.run(`kill -KILL ` + pid + `; kill -STOP ` + pid + `; kill -0 ` + pid + ` && echo SIGNALLED`)
	if strings.Contains(res.Output, "SIGNALLED") || !running(cmd.Process.Pid) {
		c.Errorf("escape: a process outside the sandbox was signalled (output: %q)", res.Output)
	}
}

func signalHarness(c *kc) {
	res := c.run(`kill -0 ` + itoa(os.Getpid()) + ` && echo SIGNALLED; kill -0 $PPID && echo PARENT-SIGNALLED`)
	if strings.Contains(res.Output, "SIGNALLED") {
		c.Errorf("escape: the harness could be signalled (output: %q)", res.Output)
	}
}

// running reports whether process pid exists and is not stopped or dead.
func running(pid int) bool {
	data, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc to tell: the signal case then relies on the command's own report
	}
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	return len(f) > 0 && f[0] != "T" && f[0] != "Z" && f[0] != "X"
}

func ptraceOutside(c *kc) {
	cmd := c.outsider()
	escaped, out := c.probe("ptrace", itoa(cmd.Process.Pid))
	escapedHarness, outHarness := c.probe("ptrace", itoa(os.Getpid()))
	if escaped || escapedHarness {
		c.Errorf("escape: ptrace attached to a process outside the sandbox (probe: %q, %q)", out, outHarness)
	}
}

func loosenUnshare(c *kc) {
	res := c.run(`unshare -r sh -c 'echo pwned > "$O/unshare"'; unshare -rn sh -c 'echo pwned > "$O/unshare-net"'`)
	c.absent(filepath.Join(c.O, "unshare"), "unshare -r", res)
	c.absent(filepath.Join(c.O, "unshare-net"), "unshare -rn", res)
}

func loosenMount(c *kc) {
	res := c.run(`mkdir m; mount --bind "$O" m && echo pwned > m/bound; ` +
		`unshare -rm sh -c 'mount --bind "$O" m && echo pwned > m/userns-bound; mount -t tmpfs none "$O" && echo pwned > "$O/tmpfs"'`)
	c.absent(filepath.Join(c.O, "bound"), "mount --bind", res)
	c.absent(filepath.Join(c.O, "userns-bound"), "mount --bind in a new user namespace", res)
	entries, _ := os.ReadDir(c.O)
	for _, e := range entries {
		c.Errorf("escape: %s appeared in the directory outside after mount attempts (output: %q)", e.Name(), res.Output)
	}
}

func loosenLandlock(c *kc) {
	escaped, out := c.probe("landlock-write", filepath.Join(c.O, "nested"))
	if escaped {
		c.Errorf("escape: a nested Landlock ruleset loosened the sandbox (probe: %q)", out)
	}
	c.absent(filepath.Join(c.O, "nested"), "a nested Landlock ruleset", Result{Output: out})
}

func loosenSetns(c *kc) {
	cmd := c.outsider()
	escaped, out := c.probe("setns", itoa(cmd.Process.Pid), filepath.Join(c.O, "setns"))
	if escaped {
		c.Errorf("escape: setns into an outside process's namespaces worked (probe: %q)", out)
	}
	c.absent(filepath.Join(c.O, "setns"), "setns", Result{Output: out})
}

func loosenSetuid(c *kc) {
	res := c.run(quote(c.opts.Setuid) + ` -u; id -u`)
	lines := strings.Fields(res.Output)
	if len(lines) != 2 || lines[0] != lines[1] {
		c.Errorf("escape: a set-user-ID program ran with another user id (output: %q)", res.Output)
	}
}

func workWorkspace(c *kc) {
	res := c.run(`echo ok > made && cat made > copied && mkdir -p sub/dir && mv copied sub/dir/moved && ln -s sub/dir/moved link && cat link > out && rm made`)
	c.holds(filepath.Join(c.W, "out"), "ok", "writing, renaming and linking in the workspace", res)
	c.absent(filepath.Join(c.W, "made"), "nothing (rm must work)", res)
}

func workTmpdir(c *kc) {
	res := c.run(`test -n "$TMPDIR" && f=$(mktemp) && echo ok > "$f" && cat "$f" > out && rm "$f"`)
	c.holds(filepath.Join(c.W, "out"), "ok", "a temporary file in $TMPDIR", res)
}

func workPipes(c *kc) {
	res := c.run(`seq 1 1000 | sort -rn | head -1 > out; (sleep 0.1; echo job > job) & wait; cat job >> out; echo x 2>/dev/null >&2`)
	got, _ := os.ReadFile(filepath.Join(c.W, "out"))
	if string(got) != "1000\njob\n" {
		c.Errorf("pipes and background jobs must work inside the sandbox: out holds %q (output: %q)", got, res.Output)
	}
}

func workGoBuild(c *kc) {
	c.write(filepath.Join(c.W, "go.mod"), "module example.com/hello\n\ngo 1.21\n")
	c.write(filepath.Join(c.W, "main.go"), "package main\n\nfunc main() { println(\"built\") }\n")
	// The build cache defaults to $XDG_CACHE_HOME/go-build, which the executor points into the
	// private TMPDIR. A GOCACHE inherited from the harness (CI sets one) lies outside the writable
	// roots and must fail there, so the case runs without it.
	res := c.run(`unset GOCACHE; GOTOOLCHAIN=local GOFLAGS=-mod=mod go build -o hello . && ./hello 2> out`)
	c.holds(filepath.Join(c.W, "out"), "built", "go build in the workspace", res)
}

func workGit(c *kc) {
	res := c.run(`git init -q repo && cd repo && echo hi > f && git add f && ` +
		`git -c user.name=kit -c user.email=kit@example.com commit -qm first && git log --format=%s > ../out`)
	c.holds(filepath.Join(c.W, "out"), "first", "git in the workspace", res)
}

func workState(c *kc) {
	c.run(`mkdir -p kept && cd kept && export KIT_STATE=kept-value`)
	res := c.runRaw(`echo "$KIT_STATE $(basename "$PWD")" > "$W/out"`)
	c.holds(filepath.Join(c.W, "out"), "kept-value kept", "the shell's state across calls", res)
}

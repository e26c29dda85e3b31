package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/leaktest"
	"github.com/dsh-go/dsh/internal/proctree"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain runs the test binary as `dsh` when a testscript scenario executes it, and otherwise
// runs the tests and then checks that no goroutine, descriptor or child process the tests
// started is left.
func TestMain(m *testing.M) {
	// A race-enabled binary sleeps a second before it exits (the race runtime's atexit_sleep_ms);
	// every dsh run is two such exits, the worker's and the supervisor's. The dsh processes the
	// tests start inherit this, and scripts get it in Setup.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	testscript.Main(leaktest.Wrap(m, leaktest.Options{KeepGC: true}), map[string]func(){
		"dsh": func() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	st, ok := proctree.ReadStat(pid)
	return ok && !st.Dead()
}

// waitGone waits (up to 10 s) for process pid to end and reports whether it did.
func waitGone(pid int) bool {
	return eventually(10*time.Second, func() bool { return !alive(pid) })
}

// eventually polls cond every 10 ms until it holds or d has passed, and reports whether it held.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond) // polling, bounded by deadline
	}
	return true
}

// readPID waits (up to 10 s) for file to hold a pid and returns it.
func readPID(t testing.TB, file string) int {
	t.Helper()
	var pid int
	ok := eventually(10*time.Second, func() bool {
		b, err := os.ReadFile(file)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	if !ok {
		t.Fatalf("no pid in %s after 10s", file)
	}
	return pid
}

// testConfig returns cfg with the tests' defaults: a fresh temporary Workdir, a 300 ms Grace and
// the test logger, where cfg sets none.
func testConfig(t testing.TB, cfg config) config {
	if cfg.Workdir == "" {
		cfg.Workdir = t.TempDir()
	}
	if cfg.Grace == 0 {
		cfg.Grace = 300 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = testLogger
	}
	return cfg
}

// testServer builds a server for cfg (Workdir defaults to a fresh temporary directory, Grace to
// 300 ms) and closes it when the test ends.
func testServer(t testing.TB, cfg config) *server {
	t.Helper()
	srv, err := newServer(testConfig(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := srv.close(ctx); err != nil {
			t.Errorf("close server: %v", err)
		}
	})
	return srv
}

// testLogger shows warnings only: the SDK logs every connection at level info.
var testLogger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// client is one MCP session of the SDK's client over an in-memory transport.
type client struct {
	t  testing.TB
	cs *mcp.ClientSession
}

// connect opens a new session on srv; it is closed when the test ends.
func connect(t testing.TB, srv *server) *client {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.connect(ctx, st); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &client{t: t, cs: cs}
}

// connectRaw opens a new session on srv the way `dsh mcp` serves stdio: the server reads through
// the line guard, over a socket pair. It returns the client and the client's end of the socket,
// whose Close makes the client vanish (no orderly shutdown).
func connectRaw(t testing.TB, srv *server) (*client, net.Conn) {
	t.Helper()
	ctx := context.Background()
	sc, cc := socketPair(t)
	if _, err := srv.connect(ctx, lineTransport(sc, sc, maxLine, 0, nil)); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-test", Version: "v0"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cc, Writer: cc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close(); _ = cs.Close() })
	return &client{t: t, cs: cs}, cc
}

// call calls tool with args (a JSON text) and fails the test on a protocol error.
func (c *client) call(tool, args string) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.callErr(context.Background(), tool, args)
	if err != nil {
		c.t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

// callErr calls tool with args (a JSON text; empty sends no arguments).
func (c *client) callErr(ctx context.Context, tool, args string) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: tool}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	return c.cs.CallTool(ctx, p)
}

// bash runs a foreground bash command and returns the result text, failing on an error result.
func (c *client) bash(command string) string {
	c.t.Helper()
	res := c.call("bash", bashArgs(command, nil))
	if res.IsError {
		c.t.Fatalf("bash %q: error result %q", command, text(res))
	}
	return text(res)
}

// bashArgs returns the JSON arguments of a bash call of command, with the extra fields.
func bashArgs(command string, extra map[string]any) string {
	m := map[string]any{"command": command, "description": "Test command"}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// text returns the concatenated text blocks of res.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// texts returns the text of each block of res.
func texts(res *mcp.CallToolResult) []string {
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		} else {
			out = append(out, fmt.Sprintf("<%T>", c))
		}
	}
	return out
}

// socketPair returns the two ends of a connected Unix stream socket pair, closed when the test
// ends: a real file descriptor on each side, as a client that spawns dsh over a socket pair
// gives it.
func socketPair(t testing.TB) (server, client *net.UnixConn) {
	t.Helper()
	syscall.ForkLock.RLock() // no SOCK_CLOEXEC on darwin: mark the pair before any fork sees it
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	var conns [2]*net.UnixConn
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "socketpair")
		c, err := net.FileConn(f) // a duplicate of fd
		_ = f.Close()
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c.(*net.UnixConn)
		t.Cleanup(func() { _ = c.Close() })
	}
	return conns[0], conns[1]
}

package sandboxtest

import (
	"fmt"
	"os"
)

// The probe's command line and what it prints when the operation it tried succeeded.
const (
	probeFlag    = "-sandboxtest.probe"
	probeEscaped = "PROBE-ESCAPED"
)

// ProbeMain runs the kit's probe and exits when the test binary was started as one (the cases
// that need a system call bash cannot make start it so); otherwise it returns at once. Call it
// first in TestMain, before flag parsing:
//
//	func TestMain(m *testing.M) {
//		sandboxtest.ProbeMain()
//		os.Exit(m.Run())
//	}
//
// The probe tries one operation: "connect-unix PATH" (a name starting with "@" is abstract),
// "send-unixgram PATH", "ptrace PID", "landlock-write PATH" (a nested Landlock ruleset that
// allows writing everywhere, then a write to PATH) and "setns PID PATH" (join the namespaces of
// process PID, then write PATH). It prints PROBE-ESCAPED when the operation succeeded and the
// error otherwise.
func ProbeMain() {
	if len(os.Args) < 3 || os.Args[1] != probeFlag {
		return
	}
	if err := probe(os.Args[2], os.Args[3:]); err != nil {
		fmt.Println("denied:", err)
		os.Exit(1)
	}
	fmt.Println(probeEscaped)
	os.Exit(0)
}

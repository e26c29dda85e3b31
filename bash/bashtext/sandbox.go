package bashtext

import (
	"strings"

	"github.com/dsh-go/dsh/bash"
)

// Confines says, for a tool description, what a command confined by s can do: "can write only in
// the workspace and in $TMPDIR, cannot use the network or Unix sockets, and cannot signal or
// trace processes outside it" (read-only mode and the network change their parts). It is
// meaningless for a sandbox that is off.
func Confines(s bash.Sandbox) string {
	where := "only in the workspace and in $TMPDIR"
	if s.Mode == bash.SandboxReadOnly {
		where = "only in $TMPDIR (the workspace is read-only)"
	}
	net := "cannot use the network or Unix sockets"
	if s.Network == bash.NetworkOn {
		net = "may use the network but not Unix sockets"
	}
	return "can write " + where + ", " + net + ", and cannot signal or trace processes outside it"
}

// SandboxMarkers returns the lines a result shown to a model ends with for r, in order:
// "[sandbox: not enforced: A; B]" when something was not enforced, then "[sandbox: <Denial>]"
// when the sandbox may have stopped the command. A nil r, or one with neither, gives none.
func SandboxMarkers(r *bash.SandboxReport) []string {
	if r == nil {
		return nil
	}
	var lines []string
	if len(r.Unenforced) > 0 {
		lines = append(lines, "[sandbox: not enforced: "+strings.Join(r.Unenforced, "; ")+"]")
	}
	if r.Denial != "" {
		lines = append(lines, "[sandbox: "+r.Denial+"]")
	}
	return lines
}

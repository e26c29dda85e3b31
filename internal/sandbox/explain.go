package sandbox

import (
	"path/filepath"
	"strings"
)

// Explain says why a confined command that failed may have failed, for the model to act on. stderr
// is what the command wrote to its standard error, workdir the directory it started in and policy
// the line that names the policy in force ("workspace-write, network off").
//
// The kernel says nothing to the harness about a denial, so Explain reads the messages tools print
// for one ("touch: cannot touch '/etc/hosts': Permission denied"): the first that names a path the
// policy denies gives "read denied: PATH", "write outside the workspace denied: PATH" or "write
// denied (read-only sandbox): PATH"; a refused socket gives "network access denied (network off)".
// When no message tells, it returns one line naming the policy.
func Explain(p Policy, readOnly bool, workdir, stderr, policy string) string {
	for line := range strings.Lines(stderr) {
		if !denialLine(line) {
			continue
		}
		for _, path := range pathsIn(line, workdir) {
			if why := classify(p, readOnly, path); why != "" {
				return why
			}
		}
		if !p.Network && networkLine(line) {
			return "network access denied (network off)"
		}
	}
	if !p.Network {
		for line := range strings.Lines(stderr) {
			if networkLine(line) && (denialLine(line) || unreachableLine(line)) {
				return "network access denied (network off)"
			}
		}
	}
	return "the command failed inside the sandbox (" + policy + "); a denied write, read or connection may be why"
}

func denialLine(line string) bool {
	return strings.Contains(line, "Permission denied") || strings.Contains(line, "Operation not permitted") ||
		strings.Contains(line, "Read-only file system")
}

func networkLine(line string) bool {
	l := strings.ToLower(line)
	for _, w := range []string{"socket", "connect", "resolve", "network", "dial", "host"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

func unreachableLine(line string) bool {
	return strings.Contains(line, "Network is unreachable") || strings.Contains(line, "Could not resolve host") ||
		strings.Contains(line, "Temporary failure in name resolution")
}

// pathsIn returns the paths a message line names: words that start with "/", and, relative to
// workdir, words the tool quoted or ended with a colon ("bash: line 1: out: Permission denied"),
// past the first word (the program's name) and leaving out line numbers; stripped of quotes and
// of a trailing colon.
func pathsIn(line, workdir string) []string {
	var out []string
	for i, w := range strings.Fields(line) {
		marked := strings.ContainsAny(w[:1], "'\"`‘“") || (i > 0 && strings.HasSuffix(w, ":"))
		w = strings.Trim(w, "'\"`‘’“”:,;()")
		switch {
		case strings.HasPrefix(w, "/"):
			out = append(out, filepath.Clean(w))
		case marked && w != "" && workdir != "" && strings.Trim(w, "0123456789") != "":
			out = append(out, filepath.Join(workdir, w))
		}
	}
	return out
}

// classify names what p denies of path, or "" when it allows both reading and writing it. A deny
// path and path are compared as written and with their links resolved (as the rules are built),
// so that a deny path given through a symbolic link still reads as a denied read.
func classify(p Policy, readOnly bool, path string) string {
	real := resolveExisting(path)
	for _, d := range p.DenyRead {
		for _, dd := range []string{d, resolveExisting(filepath.Clean(d))} {
			if path == dd || within(path, dd) || real == dd || within(real, dd) {
				return "read denied: " + path
			}
		}
	}
	for _, w := range p.Writable {
		if path == w || within(path, w) {
			return ""
		}
	}
	if isDevice(path) {
		return ""
	}
	if readOnly {
		return "write denied (read-only sandbox): " + path
	}
	return "write outside the workspace denied: " + path
}

func isDevice(path string) bool {
	for _, d := range devices {
		if path == d || within(path, d) {
			return true
		}
	}
	return false
}

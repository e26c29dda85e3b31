package persistentbash

import (
	"slices"
	"strings"
)

// DefaultScrubPatterns are the substrings that mark an ambient variable as a credential: a name
// holding one (case-insensitively) is not passed to the shell unless listed in Config.KeepEnv.
// The policy mirrors bash-local's (../bash-local/config.go), which this module may not import.
var DefaultScrubPatterns = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSPHRASE", "CREDENTIAL"}

// DefaultScrubPrefixes are the name prefixes of ambient variables never passed to the shell:
// DSH_* belongs to the harness.
var DefaultScrubPrefixes = []string{"DSH_"}

// TerminalOverrides are set in the shell's environment after scrubbing and before Config.Env,
// so programs print plain text and never wait for a pager or a credential prompt.
var TerminalOverrides = []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}

// environ builds the shell's environment from ambient: variables whose name contains one of
// patterns or starts with one of prefixes (case-insensitively) are dropped unless named in
// keep, then TerminalOverrides apply, then extra wins over both. Entries without "=" are
// dropped; the result is sorted, one entry per name.
func environ(ambient, patterns, prefixes, keep []string, extra map[string]string) []string {
	vals := make(map[string]string, len(ambient)+len(TerminalOverrides)+len(extra))
	for _, kv := range ambient {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if scrubbed(name, patterns, prefixes) && !slices.Contains(keep, name) {
			continue
		}
		vals[name] = value
	}
	for _, kv := range TerminalOverrides {
		name, value, _ := strings.Cut(kv, "=")
		vals[name] = value
	}
	for name, value := range extra {
		vals[name] = value
	}
	out := make([]string, 0, len(vals))
	for name, value := range vals {
		out = append(out, name+"="+value)
	}
	slices.Sort(out)
	return out
}

func scrubbed(name string, patterns, prefixes []string) bool {
	upper := strings.ToUpper(name)
	for _, p := range patterns {
		if p != "" && strings.Contains(upper, strings.ToUpper(p)) {
			return true
		}
	}
	for _, p := range prefixes {
		if p != "" && strings.HasPrefix(upper, strings.ToUpper(p)) {
			return true
		}
	}
	return false
}

package bashlocal

import (
	"slices"
	"strings"
)

// Environ builds a command's environment from ambient (typically os.Environ()): it drops ambient
// variables whose name contains one of patterns or starts with one of prefixes (both compared
// case-insensitively) unless the name is in keep, then applies TerminalOverrides, then extra,
// which wins over both. Entries of ambient without "=" are dropped. The result is sorted by name
// for reproducibility and has one entry per name.
func Environ(ambient []string, patterns, prefixes, keep []string, extra map[string]string) []string {
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

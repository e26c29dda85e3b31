// Package envpolicy decides which variables of the harness's environment a command inherits.
// It is the one scrub policy of the local backend, the SSH backend (whose remote launcher takes
// its lists from here) and the persistent shell.
//
// A variable is scrubbed when its name contains a pattern (KEY, SECRET, TOKEN, PASSWORD,
// PASSPHRASE, CREDENTIAL by default), starts with a prefix (DSH_), holds a carrier word as a whole
// word (CarrierWords: MYSQL_PWD, GH_PAT, CI_JOB_JWT, SENTRY_DSN, SLACK_WEBHOOK_URL,
// DOCKER_AUTH_CONFIG, SSH_AUTH_SOCK, …), or when its value has the shape of a secret (a URL with a
// password, such as DATABASE_URL=postgres://u:p@h/db, or a well-known token format), unless its
// name is kept on purpose. It is a list of rules, not a guarantee: a secret under an innocent
// name with an unknown shape passes.
package envpolicy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// TagVar is the environment variable that every process of a command carries, set by whoever
// starts the command after scrubbing, so that the command's tree is found after its members left
// its process group (see internal/proctree). Its value names the executor and the command. It
// starts with a default prefix, so a command never hands it on to a command it runs through
// another harness.
const TagVar = "DSH_PROC_TAG"

// DefaultPatterns returns the substrings that mark a variable name as a credential: a name that
// contains one, compared case-insensitively, is scrubbed. The slice is the caller's.
func DefaultPatterns() []string {
	return []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSPHRASE", "CREDENTIAL"}
}

// CarrierWords returns the whole words of a variable name (its parts between underscores,
// compared case-insensitively) that mark it as a carrier of a secret or of access that a
// substring would catch too broadly: MYSQL_PWD but not OLDPWD, GH_PAT but not GOPATH,
// NPM_CONFIG__AUTH and SSH_AUTH_SOCK but not GIT_AUTHOR_NAME. These rules apply whatever the
// configured patterns; KeepEnv passes a name on purpose. The slice is the caller's.
func CarrierWords() []string {
	return []string{"PWD", "PASSWD", "PASS", "PW", "SSHPASS", "PAT", "JWT", "DSN", "WEBHOOK", "AUTH", "SESSION", "NETRC", "COOKIE", "COOKIES", "BEARER", "PRIVATE"}
}

// ordinary are names that no carrier word scrubs: the shell's own working-directory variables,
// and the desktop variables that describe a session without giving access to it.
var ordinary = map[string]bool{"PWD": true, "OLDPWD": true, "DESKTOP_SESSION": true}

// ordinaryPrefixes are name prefixes that no carrier word scrubs (XDG_SESSION_ID and its kin
// describe the login session; they open nothing).
var ordinaryPrefixes = []string{"XDG_SESSION_"}

// valueShapes are the value shapes that mark a variable as a carrier whatever its name: a URL with
// a password in its user information, and well-known token formats. They are written in the
// syntax that Go's regexp and POSIX extended regular expressions (bash's =~) read alike: no \b,
// no escapes inside brackets, so that a program on another host applies exactly these.
var valueShapes = []string{
	`[A-Za-z][A-Za-z0-9+.-]*://[^/?#@[:space:]:]*:[^/?#@[:space:]]+@`, // scheme://user:password@
	`(^|[^A-Za-z0-9_])(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})`,
	`(^|[^A-Za-z0-9_])gl(pat|dt|rt|ptt|cbt|soat)-[A-Za-z0-9_-]{20,}`,
	`(^|[^A-Za-z0-9_])xox[abposr]-[A-Za-z0-9-]{10,}`,
	`(^|[^A-Za-z0-9_])(AKIA|ASIA)[0-9A-Z]{16}([^A-Za-z0-9_]|$)`,
	`(^|[^A-Za-z0-9_])sk-(ant-|proj-)?[A-Za-z0-9_-]{20,}`,
	`(^|[^A-Za-z0-9_])[rs]k_live_[A-Za-z0-9]{16,}`,
	`(^|[^A-Za-z0-9_])AIza[0-9A-Za-z_-]{35}`,
	`(^|[^A-Za-z0-9_])npm_[A-Za-z0-9]{36}`,
	`(^|[^A-Za-z0-9_])eyJ[A-Za-z0-9_-]{8,}[.]eyJ[A-Za-z0-9_-]{8,}[.][A-Za-z0-9_-]{8,}`, // a JWT
	`-----BEGIN [A-Z ]*PRIVATE KEY-----`,
	// a connection string's secret part: ADO.NET and ODBC Password=, Azure AccountKey= and
	// SharedAccessKey=
	`(^|[;[:space:]])[Pp]assword=[^;[:space:]]`,
	`(^|;)(AccountKey|SharedAccessKey)=[^;[:space:]]`,
	// more token formats, after the public lists of secret shapes (gitleaks' rules among them)
	`(^|[^A-Za-z0-9_])sq[upa]_[0-9a-f]{40}`,                       // SonarQube
	`(^|[^A-Za-z0-9_])hf_[A-Za-z]{34}`,                            // Hugging Face
	`pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`,                      // PyPI
	`(^|[^A-Za-z0-9_])shp(at|ca|pa|ss)_[a-fA-F0-9]{32}`,           // Shopify
	`(^|[^A-Za-z0-9_])do[por]_v1_[a-f0-9]{64}`,                    // DigitalOcean
	`(^|[^A-Za-z0-9_])SG[.][A-Za-z0-9_-]{22}[.][A-Za-z0-9_-]{43}`, // SendGrid
	`AGE-SECRET-KEY-1[0-9A-Z]{58}`,                                // age
	`(^|[^A-Za-z0-9_])dapi[a-f0-9]{32}`,                           // Databricks
}

// secretValue returns valueShapes as one expression, compiled on first use: most processes
// that import this package (dsh's supervisor, `dsh tools`) never match a value, and compiling
// it is a third of the package initialisation of dsh.
var secretValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(valueShape()) })

// valueShape returns valueShapes joined into one alternation.
func valueShape() string { return "(" + strings.Join(valueShapes, ")|(") + ")" }

// shapeLiterals are strings of which every value shape holds at least one: a value that holds
// none cannot have a secret's shape, and the expression (a backtracking match over some twenty
// alternatives at every position) is not run. Most of an environment is such values.
var shapeLiterals = []string{"://", "gh", "github_pat_", "gl", "xox", "AKIA", "ASIA", "sk-", "k_live_", "AIza", "npm_", "eyJ", "PRIVATE KEY-----",
	"assword=", "AccountKey=", "SharedAccessKey=", "sq", "hf_", "pypi-", "shp", "_v1_", "SG.", "AGE-SECRET-KEY-1", "dapi"}

// SecretValue reports whether value has the shape of a secret by itself (see valueShapes).
func SecretValue(value string) bool {
	for i := 0; i < len(value); i++ {
		for _, lit := range literalsAt[value[i]] {
			if strings.HasPrefix(value[i:], lit) {
				return secretValue().MatchString(value)
			}
		}
	}
	return false
}

// literalsAt are shapeLiterals by their first byte: one pass over a value finds whether it
// holds any of them.
var literalsAt = func() (by [256][]string) {
	for _, lit := range shapeLiterals {
		by[lit[0]] = append(by[lit[0]], lit)
	}
	return by
}()

// SessionFacts returns the variables that tell a command which session it serves, set by the
// bash tools over anything of the same name (the scrub of ambient DSH_* variables stays):
// DSH_SHELL (shell: "oneshot" or "persistent"), and DSH_SESSION_ID (the session's opaque id,
// never its owner token) and DSH_HOME (the session's workspace) when they are not empty.
func SessionFacts(shell, session, home string) map[string]string {
	env := map[string]string{"DSH_SHELL": shell}
	if session != "" {
		env["DSH_SESSION_ID"] = session
	}
	if home != "" {
		env["DSH_HOME"] = home
	}
	return env
}

// DefaultPrefixes returns the name prefixes that are always scrubbed: DSH_* belongs to the
// harness, never to a child. The slice is the caller's.
func DefaultPrefixes() []string { return []string{"DSH_"} }

// TerminalOverrides returns the variables set in every command's environment after scrubbing
// and before a caller's own, so that programs print plain text and never wait for a pager or a
// credential prompt. The slice is the caller's.
func TerminalOverrides() []string {
	return []string{"NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0"}
}

// Policy selects the ambient variables a command does not inherit. The zero value scrubs
// nothing; use Default for the project's policy.
type Policy struct {
	// Patterns are substrings of scrubbed names, Prefixes their beginnings; both are compared
	// case-insensitively and must be letters, digits and underscores.
	Patterns []string
	Prefixes []string
	// Keep names variables that are passed even when they match.
	Keep []string
}

// New returns the policy for the three lists every configuration that scrubs carries, in the
// fields ScrubPatterns, ScrubPrefixes and KeepEnv: nil patterns or prefixes mean the defaults, an
// empty non-nil slice means none of that kind. It returns an error naming the field
// ("Config.ScrubPatterns entry "A-B" must be letters, digits and underscores") when an entry is
// not a word or a kept name is not a variable name.
func New(patterns, prefixes, keep []string) (Policy, error) {
	if patterns == nil {
		patterns = DefaultPatterns()
	}
	if prefixes == nil {
		prefixes = DefaultPrefixes()
	}
	p := Policy{Patterns: slices.Clone(patterns), Prefixes: slices.Clone(prefixes), Keep: slices.Clone(keep)}
	for _, list := range []struct {
		field string
		vals  []string
	}{{"ScrubPatterns", p.Patterns}, {"ScrubPrefixes", p.Prefixes}} {
		for _, v := range list.vals {
			if !isWord(v) {
				//lint:ignore ST1005 the message begins with the Go field it names
				return Policy{}, fmt.Errorf("Config.%s entry %q must be letters, digits and underscores", list.field, v)
			}
		}
	}
	for _, name := range p.Keep {
		if !ValidName(name) {
			return Policy{}, fmt.Errorf("Config.KeepEnv entry %q is not a variable name", name)
		}
	}
	return p, nil
}

// Default returns the project's policy: DefaultPatterns and DefaultPrefixes, nothing kept.
func Default() Policy { return Policy{Patterns: DefaultPatterns(), Prefixes: DefaultPrefixes()} }

// Scrubbed reports whether p removes a variable called name, whatever its value.
func (p Policy) Scrubbed(name string) bool {
	if slices.Contains(p.Keep, name) {
		return false
	}
	upper := strings.ToUpper(name)
	if carrierName(upper) {
		return true
	}
	for _, pat := range p.Patterns {
		if pat != "" && strings.Contains(upper, strings.ToUpper(pat)) {
			return true
		}
	}
	for _, pre := range p.Prefixes {
		if pre != "" && strings.HasPrefix(upper, strings.ToUpper(pre)) {
			return true
		}
	}
	return false
}

// ScrubbedEntry reports whether p removes the variable name with value: by its name, or because
// the value has the shape of a secret (a URL with a password, a well-known token format).
func (p Policy) ScrubbedEntry(name, value string) bool {
	if slices.Contains(p.Keep, name) {
		return false
	}
	return p.Scrubbed(name) || SecretValue(value)
}

// carrierName reports whether the upper-cased name holds a carrier word and is not ordinary.
func carrierName(upper string) bool {
	if ordinary[upper] {
		return false
	}
	for _, pre := range ordinaryPrefixes {
		if strings.HasPrefix(upper, pre) {
			return false
		}
	}
	for _, word := range strings.Split(upper, "_") {
		if slices.Contains(carrierWords, word) {
			return true
		}
	}
	return false
}

var carrierWords = CarrierWords()

// Rules is a Policy in the form a program on another host applies it (the SSH backend's launcher,
// written in bash), so that the scrub has one definition: a variable called NAME with VALUE is
// scrubbed unless NAME is in Keep, when the upper-cased NAME contains one of Patterns, starts
// with one of Prefixes, or has one of CarrierWords as a whole word between underscores (unless it
// is in Ordinary or starts with one of OrdinaryPrefixes), or when VALUE matches ValueShape.
type Rules struct {
	Patterns, Prefixes []string // upper-cased
	Keep               []string
	CarrierWords       []string
	Ordinary           []string
	OrdinaryPrefixes   []string
	// ValueShape is an extended regular expression that Go's regexp and POSIX regcomp (with
	// REG_EXTENDED, as bash's =~ uses it) read alike, to be matched in the C locale.
	ValueShape string
}

// Rules returns p as Rules.
func (p Policy) Rules() Rules {
	up := func(list []string) []string {
		out := make([]string, 0, len(list))
		for _, s := range list {
			if s != "" {
				out = append(out, strings.ToUpper(s))
			}
		}
		return out
	}
	ord := make([]string, 0, len(ordinary))
	for name := range ordinary {
		ord = append(ord, name)
	}
	slices.Sort(ord)
	return Rules{
		Patterns: up(p.Patterns), Prefixes: up(p.Prefixes), Keep: slices.Clone(p.Keep),
		CarrierWords: CarrierWords(), Ordinary: ord, OrdinaryPrefixes: slices.Clone(ordinaryPrefixes),
		ValueShape: valueShape(),
	}
}

// Environ builds a command's environment from ambient (typically os.Environ()): it drops what p
// scrubs, applies TerminalOverrides, then extra, which wins over both. Entries of ambient without
// "=" or with an empty name are dropped. The result is sorted by name, one entry per name.
func (p Policy) Environ(ambient []string, extra map[string]string) []string {
	vals := make(map[string]string, len(ambient)+len(extra)+5)
	for _, kv := range ambient {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || p.ScrubbedEntry(name, value) {
			continue
		}
		vals[name] = value
	}
	for _, kv := range TerminalOverrides() {
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

// Removed returns the entries of ambient that p scrubs, as NAME=VALUE, sorted: what a command
// must never see, for callers that redact it from what commands print.
func (p Policy) Removed(ambient []string) []string {
	var out []string
	for _, kv := range ambient {
		name, value, ok := strings.Cut(kv, "=")
		if ok && name != "" && p.ScrubbedEntry(name, value) {
			out = append(out, kv)
		}
	}
	slices.Sort(out)
	return out
}

// ValidName reports whether name can be passed as an environment variable to another program:
// not empty, without "=" or NUL, and not starting with "-" (env(1) would take it for an option).
func ValidName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "=\x00") && name[0] != '-'
}

// isWord reports whether s is a non-empty run of ASCII letters, digits and underscores.
func isWord(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if !(ch == '_' || ch >= '0' && ch <= '9' || ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z') {
			return false
		}
	}
	return true
}

package bashtext

import (
	"strconv"
	"strings"
)

// ExitStatus is what ParseExitStatus reads from a tool result: the text without its final status
// marker, and the status the marker gave.
type ExitStatus struct {
	// Body is the text before the final marker's newline, or the whole text when there is none.
	Body string
	// ExitCode is the code from an "[exit code: N]" marker, or 0 when the text has no marker or
	// ends with a signal marker.
	ExitCode int
	// Signal is the name from a "[killed by signal: NAME]" marker, or empty.
	Signal string
}

// ParseExitStatus reads the status marker a bash tool appends to its result text, the inverse of
// that rendering, so every consumer agrees on it. When text ends with a newline followed by
// "[killed by signal: NAME]" (NAME without "]" or a newline), it returns the body before that
// newline and the signal. When text ends with a newline followed by "[exit code: DIGITS]", it
// returns the body and the code. Otherwise it returns text whole with exit code 0. The newline is
// required, so output that merely is the marker text stays body; only the final marker is
// consumed; and a code written otherwise than the marker writes it (a sign, a leading zero) or
// that does not fit in an int is not a marker.
func ParseExitStatus(text string) ExitStatus {
	nl := strings.LastIndexByte(text, '\n')
	if nl < 0 {
		return ExitStatus{Body: text}
	}
	last := text[nl+1:]
	if name, ok := bracketed(last, "[killed by signal: "); ok && name != "" && !strings.ContainsRune(name, ']') {
		return ExitStatus{Body: text[:nl], Signal: name}
	}
	if digits, ok := bracketed(last, "[exit code: "); ok && canonicalDigits(digits) {
		if code, err := strconv.Atoi(digits); err == nil {
			return ExitStatus{Body: text[:nl], ExitCode: code}
		}
	}
	return ExitStatus{Body: text}
}

// bracketed returns what lies between prefix and a final "]" in line.
func bracketed(line, prefix string) (string, bool) {
	if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, "]") || len(line) < len(prefix)+1 {
		return "", false
	}
	return line[len(prefix) : len(line)-1], true
}

// canonicalDigits reports whether s is a decimal number as the marker renders it: digits only,
// no sign, no leading zero.
func canonicalDigits(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

package ptyshell

import (
	"strconv"
	"strings"

	"github.com/dsh-go/dsh/internal/termtext"
)

// eventKind tells what the terminal's sanitizer found: text, or one of our markers.
type eventKind = termtext.Event

// The events of the stream: text, and our markers.
const (
	evText             = termtext.Text // printable text (valid UTF-8, only \n and \t as controls)
	evPrompt eventKind = iota          // our prompt marker (PROMPT_COMMAND); status holds the shell's $?
	evShown                            // our primary prompt (PS1) was displayed
	evCont                             // our continuation (PS2) prompt marker
	evSync                             // a barrier written by the Shell; status holds its number
)

// markers recognises the OSC payloads of one shell (see setupScript and Shell.sendBarrier):
// each carries the shell's token, and those the shell prints carry its process id, so neither a
// command's output nor a nested shell's prompt is taken for ours.
type markers struct {
	promptPrefix string // "133;D;", then the status
	promptSuffix string // ";aid=<token>;pid=<pid>"
	shown        string // "133;A;aid=<token>;pid=<pid>"
	cont         string // "133;dsh-ps2;aid=<token>;pid=<pid>"
	syncPrefix   string // "dsh-sync;<token>;", then the barrier's number
}

func newMarkers(token string, pid int) markers {
	id := ";aid=" + token + ";pid=" + strconv.Itoa(pid)
	return markers{
		promptPrefix: "133;D;",
		promptSuffix: id,
		shown:        "133;A" + id,
		cont:         "133;dsh-ps2" + id,
		syncPrefix:   "dsh-sync;" + token + ";",
	}
}

// match returns the event an OSC payload stands for, and false for any other payload.
func (m markers) match(payload string) (eventKind, int, bool) {
	switch {
	case payload == m.shown:
		return evShown, 0, true
	case payload == m.cont:
		return evCont, 0, true
	case strings.HasPrefix(payload, m.syncPrefix):
		n, err := strconv.Atoi(payload[len(m.syncPrefix):])
		return evSync, n, err == nil && n >= 0
	case len(payload) >= len(m.promptPrefix)+len(m.promptSuffix) &&
		strings.HasPrefix(payload, m.promptPrefix) && strings.HasSuffix(payload, m.promptSuffix):
		status, ok := parseStatus(payload[len(m.promptPrefix) : len(payload)-len(m.promptSuffix)])
		return evPrompt, status, ok
	}
	return 0, 0, false
}

// parseStatus parses an exit status of one to three decimal digits (0–255).
func parseStatus(s string) (int, bool) {
	if len(s) == 0 || len(s) > 3 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, n <= 255
}

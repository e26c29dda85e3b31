package ptyshell

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

func startMarker(nonce string) string { return "__DSH_START_" + nonce + "__" }
func endMarker(nonce string) string   { return "__DSH_END_" + nonce + ":" }

// newNonce returns 16 random hex digits (64 bits): enough that no output guesses it, short
// because bash's line editor reads the typed line one byte at a time.
func newNonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux and macOS
	return hex.EncodeToString(b[:])
}

// wrapLine returns the single physical line typed into the shell for command: it prints the
// start marker, evaluates the command in the current shell (so cd, exports, functions and jobs
// persist), then prints the end marker followed by the command's exit status. The command is
// quoted as one $'…' word in which every byte outside printable ASCII, and the characters
// that mean something to bash or readline inside it, are escaped: the line is plain printable
// ASCII, so a tab, a Ctrl-C or a newline in the command reaches bash as text and never as a key.
// Builtins are called as \builtin so an alias named printf or eval cannot break the line.
func wrapLine(nonce, command string) string {
	var b strings.Builder
	b.Grow(len(command) + 200)
	b.WriteString(`\builtin echo `)
	b.WriteString(startMarker(nonce))
	b.WriteString(`;\builtin eval -- `)
	quoteANSIC(&b, command)
	b.WriteString(`;\builtin echo `)
	b.WriteString(endMarker(nonce))
	b.WriteString(`"$?"`)
	return b.String()
}

const hexDigits = "0123456789abcdef"

// quoteANSIC writes s as a bash $'…' string whose text is printable ASCII only.
func quoteANSIC(b *strings.Builder, s string) {
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\'':
			b.WriteString(`\'`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '!':
			// History expansion runs on the typed line before parsing; never give it a '!'.
			b.WriteString(`\x21`)
		case c < 0x20 || c >= 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString("'")
}

// wrapFile is wrapLine for a command staged in the file at path: the shell reads the file into
// one word and evaluates it. Command substitution drops trailing newlines, which eval ignores.
func wrapFile(nonce, path string) string {
	var b strings.Builder
	b.WriteString(`\builtin echo `)
	b.WriteString(startMarker(nonce))
	b.WriteString(`;\builtin eval -- "$(<`)
	quoteANSIC(&b, path)
	b.WriteString(`)";\builtin echo `)
	b.WriteString(endMarker(nonce))
	b.WriteString(`"$?"`)
	return b.String()
}

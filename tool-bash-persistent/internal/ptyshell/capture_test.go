//go:build linux

package ptyshell

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

const testNonce = "0123456789abcdef"

// step is one input to a tracker: text, or a prompt / continuation event.
type step struct {
	text   string
	prompt bool
	cont   bool
}

func feedTracker(tr *tracker, steps []step) {
	for _, s := range steps {
		switch {
		case s.prompt:
			tr.event(evPrompt, "", 0)
		case s.cont:
			tr.event(evCont, "", 0)
		default:
			tr.event(evText, s.text, 0)
		}
	}
}

func txt(s ...string) []step {
	out := make([]step, len(s))
	for i, x := range s {
		out[i] = step{text: x}
	}
	return out
}

func TestTracker(t *testing.T) {
	checkLeaks(t)
	start := startMarker(testNonce) + "\n"
	end := endMarker(testNonce)
	P := step{prompt: true}
	cases := []struct {
		name   string
		steps  []step
		phase  phase
		status int
		out    string
		cont   bool
	}{
		{"complete", append(txt("noise", start, "hello\n", end+"0\n"), P), phaseReady, 0, "hello", false},
		{"no trailing newline", append(txt(start+"hi"+end+"7\n"), P), phaseReady, 7, "hi", false},
		{"empty output", append(txt(start+end+"0\n"), P), phaseReady, 0, "", false},
		{"only the last newline is trimmed", append(txt(start+"a\n\n"+end+"0\n"), P), phaseReady, 0, "a\n", false},
		{"ended without prompt yet", txt(start + "x\n" + end + "1\n"), phaseEnded, 1, "x", false},
		{"torn end marker", append(txt(start+"hello from stub\n"+end, "7", "\n"), P), phaseReady, 7, "hello from stub", false},
		{"end marker split mid-name", append(txt(start+"a\n"+end[:10], end[10:]+"12\n"), P), phaseReady, 12, "a", false},
		{"start marker split", append(txt(start[:7], start[7:]+"b\n", end+"0\n"), P), phaseReady, 0, "b", false},
		{"foreign end marker is output", append(txt(start+"__DSH_END_ffff:0\nreal\n"+end+"0\n"), P), phaseReady, 0, "__DSH_END_ffff:0\nreal", false},
		{"end marker without digits is output", append(txt(start+end+"x\n"+end+"3\n"), P), phaseReady, 3, "", false},
		{"end marker with four digits is output", append(txt(start+end+"1234\n"+end+"3\n"), P), phaseReady, 3, "", false},
		{"end marker with status over 255 is output", append(txt(start+end+"256\nz\n"+end+"3\n"), P), phaseReady, 3, "z", false},
		{"prompt before start", []step{{text: "junk"}, P}, phasePrompt, 0, "", false},
		{"prompt in body", append(txt(start, "partial\n"), P), phasePrompt, 0, "partial", false},
		{"prompt in body keeps a possible marker prefix", append(txt(start, "abc__DSH_"), P), phasePrompt, 0, "abc__DSH_", false},
		{"text after prompt ignored", append(txt(start, "p"), P, step{text: "dsh> "}), phasePrompt, 0, "p", false},
		{"continuation before start", []step{{text: "x"}, {cont: true}}, phaseWaitStart, 0, "", true},
		{"utf-8 at the marker", append(txt(start+"€€"+end+"0\n"), P), phaseReady, 0, "€€", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := newTracker(testNonce, 1000)
			feedTracker(tr, c.steps)
			o := tr.output()
			if tr.phase != c.phase || tr.status != c.status || o.text() != c.out || tr.cont != c.cont {
				t.Fatalf("phase %d status %d out %q cont %v; want %d %d %q %v", tr.phase, tr.status, o.text(), tr.cont, c.phase, c.status, c.out, c.cont)
			}
		})
	}
}

func TestTrackerDropsLinesWithTheNonce(t *testing.T) {
	checkLeaks(t)
	tr := newTracker(testNonce, 1000)
	feedTracker(tr, txt(startMarker(testNonce)+"\n", "+ eval x\n+ printf '%s%s\\n' "+endMarker(testNonce)+" 0\nkept\n", endMarker(testNonce)+"0\n"))
	if got := tr.output().text(); got != "+ eval x\nkept" {
		t.Fatalf("got %q", got)
	}
}

func TestClipperKeepsHeadAndTail(t *testing.T) {
	checkLeaks(t)
	cases := []struct {
		name         string
		writes       []string
		max          int
		head, tail   string
		omitted      int64
		omittedLines int64
	}{
		{"fits", []string{"abc", "def"}, 10, "abcdef", "", 0, 0},
		{"exactly the budget", []string{"0123456789"}, 10, "0123456789", "", 0, 0},
		{"clipped", []string{"0123456789", "abcdefghij"}, 10, "01234", "fghij", 10, 0},
		{"lines counted", []string{"a\nb\nc\nd\ne\nf\ng\n"}, 4, "a\n", "g\n", 10, 5},
		{"runes not bytes", []string{"ééééééééé"}, 4, "éé", "éé", 5, 0},
		{"many small writes", strings.Split(strings.Repeat("x", 5000)+"END", ""), 6, "xxx", "END", 4997, 0},
		{"a write larger than the tail", []string{"ab", "c\nd", "ef\ngh\nij"}, 4, "ab", "ij", 9, 3},
		{"a large write after a trim", []string{"0123", "4\n5", "6789abc\nd€€"}, 6, "012", "d€€", 12, 2},
		{"a large multi-byte write", []string{"x", "ééééé€€€"}, 4, "xé", "€€", 5, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := clipper{headMax: c.max / 2, tailMax: c.max - c.max/2}
			for _, w := range c.writes {
				cl.write(w)
			}
			o := cl.output()
			if o.Head != c.head || o.Tail != c.tail || o.OmittedChars != c.omitted || o.OmittedLines != c.omittedLines {
				t.Fatalf("got %+v; want head %q tail %q omitted %d (%d lines)", o, c.head, c.tail, c.omitted, c.omittedLines)
			}
		})
	}
}

// TestClipperProgress checks what a progress report reads from the clipper: every byte written
// counted, kept or not, and the last non-empty line wherever it lies (head, tail, across both,
// or cut by the omission).
func TestClipperProgress(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		max    int
		bytes  int64
		last   string
	}{
		{"nothing", nil, 10, 0, ""},
		{"one line", []string{"hello\n"}, 40, 6, "hello"},
		{"a whole line before one being written", []string{"a\nb", "c"}, 40, 4, "a"},
		{"only a line being written", []string{"ab", "c"}, 40, 3, ""},
		{"trailing blank lines", []string{"a\nlast\n\n\n"}, 40, 9, "last"},
		{"line across head and tail", []string{"abcdefgh", "ij\n"}, 10, 11, "abcdefghij"},
		{"line cut by the omission", []string{strings.Repeat("x", 30) + "yz\n"}, 10, 33, "xxyz"},
		{"line in the tail", []string{strings.Repeat("y\n", 20) + "end\n"}, 10, 44, "end"},
		{"multi-byte", []string{"é\n€€\n"}, 40, 10, "€€"},
		{"nonce lines skipped", []string{"kept\n+ eval NONCE\n"}, 40, 18, "kept"},
		{"only nonce lines", []string{"+ eval NONCE\n"}, 40, 13, ""},
		{"a line after blank ones", []string{"x\n\n\n"}, 40, 4, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := clipper{headMax: c.max / 2, tailMax: c.max - c.max/2}
			for _, w := range c.writes {
				cl.write(w)
			}
			if got := cl.lastLine("NONCE"); cl.bytes != c.bytes || got != c.last {
				t.Fatalf("bytes %d, last line %q; want %d, %q", cl.bytes, got, c.bytes, c.last)
			}
		})
	}
}

// FuzzTracker checks that the output of a command is found whatever it holds and however the
// stream is cut, that it stays within budget and valid UTF-8.
func FuzzTracker(f *testing.F) {
	f.Add("hello\n", uint16(3), uint8(0))
	f.Add("__DSH_END_"+testNonce+":x", uint16(30), uint8(7))
	f.Add(strings.Repeat("é", 100), uint16(51), uint8(255))
	f.Fuzz(func(t *testing.T, body string, cut uint16, status uint8) {
		if !utf8.ValidString(body) || strings.Contains(body, testNonce) {
			return // the sanitizer hands over valid UTF-8; a nonce cannot be guessed
		}
		stream := "before" + startMarker(testNonce) + "\n" + body + endMarker(testNonce) + strconv.Itoa(int(status)) + "\n"
		i := int(cut) % (len(stream) + 1)
		for i > 0 && i < len(stream) && !utf8.RuneStart(stream[i]) {
			i--
		}
		tr := newTracker(testNonce, 64)
		feedTracker(tr, append(txt(stream[:i], stream[i:]), step{prompt: true}))
		if tr.phase != phaseReady || tr.status != int(status) {
			t.Fatalf("phase %d status %d", tr.phase, tr.status)
		}
		o := tr.output()
		want := strings.TrimSuffix(body, "\n")
		if o.Clipped() {
			if !strings.HasPrefix(want, o.Head) || !strings.HasSuffix(want, o.Tail) {
				t.Fatalf("head/tail %q/%q not from %q", o.Head, o.Tail, want)
			}
			if int64(utf8.RuneCountInString(o.Head)+utf8.RuneCountInString(o.Tail))+o.OmittedChars != int64(utf8.RuneCountInString(want)) {
				t.Fatalf("rune accounting off: %+v for %d runes", o, utf8.RuneCountInString(want))
			}
		} else if o.text() != want {
			t.Fatalf("got %q, want %q", o.text(), want)
		}
		if utf8.RuneCountInString(o.Head)+utf8.RuneCountInString(o.Tail) > 64 {
			t.Fatalf("over budget: %+v", o)
		}
	})
}

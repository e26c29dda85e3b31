package gates

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestOutputReplaysInOrder(t *testing.T) {
	o := NewOutput()
	defer o.Close()
	o.Writer(Stdout).Write([]byte("a"))
	o.Writer(Stdout).Write([]byte("b"))
	o.Writer(Stderr).Write([]byte("C"))
	o.Writer(Stdout).Write([]byte("d"))
	var both bytes.Buffer
	if err := o.Replay(&both, &both); err != nil {
		t.Fatal(err)
	}
	if both.String() != "abCd" {
		t.Errorf("interleaved replay %q, want %q", both.String(), "abCd")
	}
	var out, errb bytes.Buffer
	o.Replay(&out, &errb)
	if out.String() != "abd" || errb.String() != "C" {
		t.Errorf("split replay %q / %q", out.String(), errb.String())
	}
	if len(o.chunks) != 3 {
		t.Errorf("%d chunks, want 3 (adjacent writes to one stream merge)", len(o.chunks))
	}
}

func TestOutputSpillsAndDrops(t *testing.T) {
	o := &Output{MemLimit: 4, SpillLimit: 6}
	o.Writer(Stdout).Write([]byte("1234"))  // memory
	o.Writer(Stderr).Write([]byte("56"))    // spill file
	o.Writer(Stdout).Write([]byte("789AB")) // 4 spilled, 1 dropped
	o.Writer(Stdout).Write([]byte("CD"))    // dropped
	if o.spill == nil {
		t.Fatal("no spill file")
	}
	name := o.spill.Name()
	if o.Len() != 10 {
		t.Errorf("Len = %d, want 10", o.Len())
	}
	var both bytes.Buffer
	if err := o.Replay(&both, &both); err != nil {
		t.Fatal(err)
	}
	want := "123456789A[3 bytes of output dropped: over the output limit]\n"
	if both.String() != want {
		t.Errorf("replay %q, want %q", both.String(), want)
	}
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(name); !os.IsNotExist(err) {
		t.Errorf("spill file %s still exists after Close", name)
	}
	var after bytes.Buffer
	o.Replay(&after, &after)
	if strings.Contains(after.String(), "1234") {
		t.Errorf("Close did not empty the output")
	}
}

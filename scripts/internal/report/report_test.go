package report

import (
	"bytes"
	"testing"
)

func TestFormatAndOrder(t *testing.T) {
	fs := []Finding{
		{Path: "b.md", Line: 2, Col: 1, Message: "x"},
		{Path: "a.md", Line: 10, Message: "whole line"},
		{Path: "a.md", Line: 9, Col: 30, Message: "y"},
		{Path: "a.md", Message: "whole file"},
		{Path: "a.md", Line: 9, Col: 4, Message: "z"},
	}
	Sort(fs)
	var b bytes.Buffer
	if err := Print(&b, fs); err != nil {
		t.Fatal(err)
	}
	want := "a.md: whole file\na.md:9:4: z\na.md:9:30: y\na.md:10: whole line\nb.md:2:1: x\n"
	if b.String() != want {
		t.Errorf("Print:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := PrintJSON(&b, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("PrintJSON(nil) = %q, %v; want an empty array", b.String(), err)
	}
}

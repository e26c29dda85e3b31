package tools

import (
	"context"
	"testing"
)

func TestRedactText(t *testing.T) {
	rep := RedactText([]Secret{{Name: "SHORT", Value: "abc"}, {Name: "API_KEY", Value: "s3cr3t-value"}, {Name: "LONGER", Value: "s3cr3t-value-2"}})
	if rep == nil {
		t.Fatal("RedactText returned nil for a secret long enough")
	}
	for in, want := range map[string]string{
		"key=s3cr3t-value.":   "key=[redacted: API_KEY].",
		"s3cr3t-value-2 abc":  "[redacted: LONGER] abc",
		"nothing to see here": "nothing to see here",
	} {
		if got := rep(in); got != want {
			t.Errorf("rep(%q) = %q; want %q", in, got, want)
		}
	}
	if RedactText([]Secret{{Name: "SHORT", Value: "abc"}}) != nil {
		t.Error("RedactText of secrets all too short is not nil")
	}
}

func TestProgressContext(t *testing.T) {
	ctx := context.Background()
	if ProgressFrom(ctx) != nil {
		t.Fatal("ProgressFrom of a bare context is not nil")
	}
	if WithProgress(ctx, nil) != ctx {
		t.Error("WithProgress with a nil reporter changed the context")
	}
	var got Progress
	ctx = WithProgress(ctx, func(p Progress) { got = p })
	r := ProgressFrom(ctx)
	if r == nil {
		t.Fatal("ProgressFrom lost the reporter")
	}
	r(Progress{Bytes: 3, Message: "hi"})
	if got != (Progress{Bytes: 3, Message: "hi"}) {
		t.Errorf("reporter got %+v", got)
	}
}

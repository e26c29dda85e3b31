package bash_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/dsh-go/dsh/bash"
)

func TestOutput(t *testing.T) {
	tests := []struct {
		name      string
		out       bash.Output
		text      string
		truncated bool
	}{
		{"empty", bash.Output{}, "", false},
		{"whole stream in head", bash.Output{Head: "abc", TotalBytes: 3}, "abc", false},
		{"whole stream in head and tail", bash.Output{Head: "ab", Tail: "cd", TotalBytes: 4}, "abcd", false},
		{"bytes omitted", bash.Output{Head: "ab", Tail: "yz", OmittedBytes: 22, TotalBytes: 26}, "abyz", true},
		{"only a tail kept", bash.Output{Tail: "yz", OmittedBytes: 24, TotalBytes: 26}, "yz", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.out.Text(); got != tt.text {
				t.Errorf("Text() = %q, want %q", got, tt.text)
			}
			if got := tt.out.Truncated(); got != tt.truncated {
				t.Errorf("Truncated() = %v, want %v", got, tt.truncated)
			}
		})
	}
}

func TestUnknownTaskError(t *testing.T) {
	var err error = &bash.UnknownTaskError{ID: "nope"}
	if got, want := err.Error(), `unknown bash task "nope"`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("read output: %w", err)
	if !errors.Is(wrapped, bash.ErrUnknownTask) {
		t.Error("a wrapped *UnknownTaskError does not match ErrUnknownTask")
	}
	var unknown *bash.UnknownTaskError
	if !errors.As(wrapped, &unknown) || unknown.ID != "nope" {
		t.Errorf("errors.As found %v, want the error for id nope", unknown)
	}
	if errors.Is(err, bash.ErrClosed) || errors.Is(err, bash.ErrAbortedBeforeSpawn) {
		t.Error("an *UnknownTaskError matches an unrelated sentinel")
	}
	quoted := &bash.UnknownTaskError{ID: "a\"b\nc"}
	if got, want := quoted.Error(), `unknown bash task "a\"b\nc"`; got != want {
		t.Errorf("Error() of an odd id = %q, want %q", got, want)
	}
}

package bashtext_test

import (
	"fmt"

	"github.com/dsh-go/dsh/bash/bashtext"
)

func ExampleParseExitStatus() {
	for _, text := range []string{
		"build failed\n[exit code: 2]",
		"partial output\n[killed by signal: SIGKILL]",
		"[exit code: 2]", // no newline before it: output, not a marker
	} {
		st := bashtext.ParseExitStatus(text)
		fmt.Printf("body %q, exit code %d, signal %q\n", st.Body, st.ExitCode, st.Signal)
	}
	// Output:
	// body "build failed", exit code 2, signal ""
	// body "partial output", exit code 0, signal "SIGKILL"
	// body "[exit code: 2]", exit code 0, signal ""
}

package backend_test

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/bash"
	"github.com/dsh-go/dsh/bash/backend"
)

// A backend resolves a request with the shared rules, collects a command's two streams within the
// limits, and keeps it as a background task whose reads follow the bash.TaskRead format. Here a
// "command" writes more than the stdout budget holds before anyone reads, so the read says where
// bytes were dropped.
func Example() {
	lim := bash.Limits{MaxOutputBytes: 64}
	lim.SetDefaults()
	req, err := backend.Resolve(bash.Request{Command: "seq 1 40", Owner: "agent-1"}, lim, "/work")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("workdir", req.Workdir, "timeout", req.Timeout, "stdout budget", req.StdoutMaxBytes)

	var tasks backend.TaskTable
	streams := backend.NewStreams(lim, req.StdoutMaxBytes, nil) // nil: no spill files
	t := tasks.Add(req.Command, req.Owner, streams.Stdout, streams.Stderr)
	for i := 1; i <= 40; i++ { // what the process would write
		fmt.Fprintf(t.Stdout, "%d\n", i)
	}
	var wg sync.WaitGroup
	code := 0
	t.Settle(&code, "", func(*bash.Task) {}) // the process exited 0
	wg.Wait()

	read, _ := tasks.Read(t.Task.ID())
	fmt.Println(t.Task.ID(), read.Task.Status(), "lossy:", read.Lossy)
	fmt.Print(strings.ReplaceAll(read.Delta, "\n", " "))
	// Output:
	// workdir /work timeout 2m0s stdout budget 64
	// bash-1 completed lossy: true
	// 1 2 3 4 5 6 7 8 [… 47 bytes dropped …] 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40
}

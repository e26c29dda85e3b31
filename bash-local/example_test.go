package bashlocal_test

import (
	"context"
	"fmt"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
)

func Example() {
	ex, err := bashlocal.New(bashlocal.Config{})
	if err != nil {
		panic(err)
	}
	defer ex.Close(context.Background())

	spec, err := ex.Resolve(bash.Request{Command: "echo hello; echo oops >&2; exit 3"})
	if err != nil {
		panic(err)
	}
	res, err := ex.Run(context.Background(), spec)
	if err != nil {
		panic(err)
	}
	fmt.Printf("exit %d\nstdout %q\nstderr %q\n", *res.ExitCode, res.Stdout.Text(), res.Stderr.Text())
	// Output:
	// exit 3
	// stdout "hello\n"
	// stderr "oops\n"
}

func ExampleExecutor_Start() {
	ex, err := bashlocal.New(bashlocal.Config{})
	if err != nil {
		panic(err)
	}
	defer ex.Close(context.Background())
	done := make(chan bash.TaskID, 1)
	ex.OnTaskDone(func(t *bash.Task) { done <- t.ID() })

	spec, _ := ex.Resolve(bash.Request{Command: "echo building; echo warning >&2"})
	task, err := ex.Start(spec)
	if err != nil {
		panic(err)
	}
	fmt.Println("finished:", <-done, task.Status())
	read, _ := ex.ReadOutput(task.ID())
	fmt.Print(read.Delta)
	// Output:
	// finished: bash-1 completed
	// building
	// [stderr]
	// warning
}

// Package bash is the executor seam: the one interface through which an agent harness runs shell
// commands, and the vocabulary types that cross it.
//
// A backend (the local one in github.com/dsh-go/dsh/bash-local, the remote one in
// github.com/dsh-go/dsh/bash-ssh) implements [Executor]; model-facing tools (github.com/dsh-go/dsh/tool-bash)
// consume it and never import a backend. The package holds no process, signal or file code.
//
// The flow is: a caller builds a [Request], [Executor.Resolve] turns it into a [Spec] with every
// default filled and every cap applied, and the spec is either run in the foreground with
// [Executor.Run] or started as a background [Task] with [Executor.Start]. Command outcomes
// (non-zero exit, timeout, abort, death by a signal) are results, never errors; errors are kept
// for infrastructure failures (a workdir that does not exist, a closed executor, an unknown task).
//
// Backends build tasks with [NewTask], deliver completions with [Listeners], and check themselves
// against the contract with the conformance kit in package bashtest.
package bash

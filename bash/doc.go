// Package bash is the executor seam: the one interface through which an agent harness runs shell
// commands, and the vocabulary types that cross it.
//
// A backend (the local one in github.com/dsh-go/dsh/bash-local, the remote one in
// github.com/dsh-go/dsh/bash-ssh) implements [Executor]; model-facing tools (github.com/dsh-go/dsh/tool-bash)
// consume it and never import a backend. The package holds no process, signal or file code.
//
// The flow is: a caller builds a [Request] and either runs it in the foreground with
// [Executor.Run] or starts it as a background [Task] with [Executor.Start]; [Executor.Resolve]
// shows the request with every default filled and every cap applied, as Run and Start will see
// it. Every backend applies the same [Limits]. Command outcomes
// (non-zero exit, timeout, abort, death by a signal) are results, never errors; errors are kept
// for infrastructure failures (a workdir that does not exist, a closed executor, an unknown task).
//
// Backends build tasks with [NewTask], deliver completions with [Listeners], share the
// implementer's kit in package backend (collection, spill files, the task table) and check
// themselves against the contract with the conformance kit in package bashtest.
package bash

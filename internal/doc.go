// Package internal is the root of the machinery that this repository's modules share without
// promising it to anyone else: Go's internal rule lets every github.com/dsh-go/dsh/... module
// import github.com/dsh-go/dsh/internal/... and no other module.
//
//   - envpolicy: which ambient variables a command may inherit, and what it is given instead.
//   - proctree: finding and stopping every process of a command's tree, escapees included.
//   - proclimit: the RLIMIT_NPROC of commands, below the harness's own, and telling when the
//     user's tasks are at it.
//   - sandbox: confining a command before it starts (Landlock, seccomp, no_new_privs, no
//     capabilities) from a discarded OS thread, with no helper binary and no root.
//   - supervisor: a supervisor process that keeps every command from outliving a killed
//     harness.
//   - termtext: terminal output made plain text that no terminal acts on, for both bash tools.
//   - leaktest: the checks every test binary runs for leaked goroutines, descriptors and
//     processes.
//   - escapetest: escapees that hide their tag, and running a test as an unprivileged user.
package internal

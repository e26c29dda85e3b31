// Package ptyshell runs one interactive bash on its own pseudo-terminal and runs commands in it
// one at a time, so that the shell's state (working directory, variables, functions, aliases,
// jobs) carries from one command to the next.
//
// Each command is typed as one line of plain ASCII that prints a start marker, evaluates the
// command and prints an end marker with the exit status; both markers carry a fresh random
// nonce. Readiness comes from a prompt escape the shell prints before every prompt, never from
// silence. Output is sanitized (escapes and controls removed) and clipped to a rune budget,
// keeping head and tail. On Linux, a program blocked reading the terminal is found through
// /proc and answered with end-of-file, and Close stops every process the shell started,
// including those that left its session. The package is internal: its API is not a promise.
package ptyshell

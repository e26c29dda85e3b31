// Package bashpolicy decides whether a bash command may run, on the command parsed by
// mvdan.cc/sh/v3/syntax rather than on its text.
//
// A [Policy] holds allow, ask and deny rules (see [Rules]; [Load] reads them from a JSON file).
// [Policy.Decide] parses a command and judges every simple command in it, wherever it sits:
// pipelines and lists, subshells and groups, command and process substitutions, function bodies,
// the command a wrapper runs (env, command, exec, nice, timeout, xargs, find -exec, sudo, …),
// and the code a shell is given as a string (bash -c, eval, trap, an alias, a here-document fed
// to bash). Quotes are removed and braces expanded before matching, so r”m and {rm,-rf,x} are
// rm. What the policy cannot see (a command name that is not a literal word, a script, a shell
// fed from a pipe, a syntax error) takes the policy's "unknown" outcome, ask by default; a
// redirection that writes outside the workspace is asked. Deny wins over ask, ask over allow.
//
// A [Stage] puts a policy in front of the bash tools as a github.com/dsh-go/dsh/tools Before
// stage, following a persistent shell's directory changes from call to call.
//
// A policy is not a sandbox: it judges what a command says it will run, not what the programs it
// allows do once they run. The package README lists the shapes it judges and what it cannot see.
package bashpolicy

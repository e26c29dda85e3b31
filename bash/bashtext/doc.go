// Package bashtext holds the text the bash tools (github.com/dsh-go/dsh/tool-bash and
// github.com/dsh-go/dsh/tool-bash-persistent) and the backends that write task notes show a
// model about a command: the sandbox sentence of a tool description, the sandbox marker lines a
// result ends with, and the parse of the exit-status marker a result ends with. It is kept out of
// package bash, the contract, so that the seam holds no model-facing wording; the tools share
// this one copy of it.
package bashtext

// Package persistentbash is the persistent bash tool for agent harnesses: one model-facing
// tool, bash(command), whose shell lives on between calls of the same agent, so the working
// directory, exported variables, functions, aliases and background jobs carry over.
//
// Each owning agent gets its own interactive bash on a real pseudo-terminal, started on its
// first call. Calls of one agent run one at a time in arrival order; calls of different agents
// run in parallel. Results are plain text: the command's output clipped to head and tail,
// "[exit code: N]" for a non-zero status, and notices when a program waited for input, the
// shell stopped at its continuation prompt, or the shell was reset (exit, timeout); the first
// result after a reset starts with a line saying why.
//
// [New] builds the tool from a [Config]; [Shells.Tool] is the definition to register;
// [Shells.Release] closes one agent's shell and [Shells.Close] all of them, with every process
// they started. [Shells] is a github.com/dsh-go/dsh/tools Provider, so a harness serves it the
// way it serves any other.
package persistentbash

// Package backend is the implementer's kit of the executor seam, kept beside the seam as
// database/sql/driver keeps its helpers beside its interfaces: what every backend of
// bash.Executor needs and must do the same way, so that a new backend (a container, a cluster)
// is written without copying or importing another backend.
//
//   - Resolve and CheckRequest apply bash.Limits to a request the one way the contract states.
//   - Collector keeps a stream's head and tail within a memory budget and spills the whole
//     stream to a private SpillDir; Streams sets up the two collectors of one command.
//   - TaskTable keeps background tasks: the "bash-N" ids, start order, owners, consuming reads in
//     the bash.TaskRead delta format (UTF-8 hold-back, lossy reads marked where bytes were
//     dropped) and the one-shot notes such as "spawn failed: …".
//   - Listeners gives OnTaskDone and Close their listener contract (registration order, panics
//     contained, silence after Close).
//
// The package starts no process and holds no platform code.
package backend

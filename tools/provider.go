package tools

import "context"

// Provider is a family of tools that keeps state for the agents calling them, such as
// background tasks or a shell per agent, keyed by the calling agent's Owner token. A harness
// registers Tools, calls Release when an agent session ends and Close when it shuts down; it
// never needs to know which provider it holds.
//
// Ownership: a provider owns what its tools started and the state it keeps per owner; anything
// it was given when it was built (an executor, for instance) stays the giver's, and Close
// leaves it open. Methods are safe for concurrent use.
//
//catalog:service tools/provider
type Provider interface {
	// Tools returns the provider's tools in the order to register them, the same tools on
	// every call. The tools are shared: the caller must not modify them.
	Tools() []*Tool

	// Release ends what owner still has running (its background tasks, its shell) and forgets
	// the state kept for it; a later call of the same owner starts afresh. It returns once what
	// it stopped has ended. It covers what owner started before Release was called: the caller
	// releases an owner once the owner's calls have returned (cancel them first). An owner the
	// provider never saw, and the empty owner, have nothing to release. It returns an error
	// when something could not be stopped.
	Release(owner string) error

	// Close releases every owner, refuses later calls, cancels the calls in flight and waits
	// for them to return. ctx bounds the wait for stopped work to end: when ctx is done first,
	// Close returns ctx's error (what was stopped is still being stopped). A provider whose
	// teardown has a fixed bound of its own may not consult ctx; its documentation says so. It
	// returns an error when something could not be stopped. Close is idempotent: a second call
	// waits for the first and returns what it returned.
	Close(ctx context.Context) error
}

// Annotations are hints about a tool's behaviour for clients that choose how to confirm or
// schedule its calls; they match the tool annotations of the Model Context Protocol. They are
// hints for a user interface, never a security boundary.
//
// All four hints are stated, because some clients require every one of them: a tool that sets
// [Tool].Annotations takes a position on each, while a nil Annotations states none (a client
// then assumes its defaults, in MCP: not read-only, destructive, not idempotent, open world).
//
// ReadOnlyHint: the tool does not modify its environment. DestructiveHint: the tool may delete
// or overwrite what exists, rather than only add (meaningful when ReadOnlyHint is false).
// IdempotentHint: calling the tool again with the same arguments has no further effect on its
// environment (meaningful when ReadOnlyHint is false). OpenWorldHint: the tool may interact
// with an open set of external entities (the network, any file or process), rather than a
// closed domain of its own.
type Annotations struct {
	ReadOnlyHint    bool
	DestructiveHint bool
	IdempotentHint  bool
	OpenWorldHint   bool
}

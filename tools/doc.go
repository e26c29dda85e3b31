// Package tools defines what a model-facing tool is for an agent harness: a name, a description
// the model reads, typed arguments whose JSON Schema is derived from a Go struct, an execute
// function and optional presenters for user interfaces.
//
// A typed tool is built with [New]: the argument struct's schema is inferred with
// github.com/google/jsonschema-go (properties in field order, descriptions from `jsonschema`
// struct tags), and every call's raw JSON is validated against it before it is decoded, so the
// typed body never sees bad input. All violations of one call are reported together in one
// result `Error: invalid arguments: …`; keys the schema does not declare are dropped before
// decoding and never reach the body.
//
// A [Registry] holds tools in registration order, lists what the model sees ([Declaration]),
// and executes calls by name through a [Middleware] chain and the permission stages: [Before]
// stages that allow, deny or ask (an [Approver] answers an ask), and [After] stages that accept,
// replace or block a result ([Redact] is one). The stages come last on both sides, so no
// middleware can get a call or a result past them. Errors and panics inside a tool become
// results with IsError set, never a crash of the harness.
//
// A tool carries a Title for people and behaviour hints ([Annotations]) set by the package that
// defines it. A [Provider] is a family of tools that keeps state per owner (background tasks, a
// shell) and says how to release one owner and how to close it all, so a harness serves any
// provider the same way.
//
// [CallView], [ResultView] and the terminal card types are the provider-neutral presentation
// vocabulary; package github.com/dsh-go/dsh/tools/acp maps them to Agent Client Protocol
// session updates.
package tools

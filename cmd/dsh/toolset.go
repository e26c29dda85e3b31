package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/bash"
	bashlocal "github.com/dsh-go/dsh/bash-local"
	bashpolicy "github.com/dsh-go/dsh/bash-policy"
	toolbash "github.com/dsh-go/dsh/tool-bash"
	persistentbash "github.com/dsh-go/dsh/tool-bash-persistent"
	"github.com/dsh-go/dsh/tools"
)

// config is what the command line says about the tools: which ones, where commands start and
// how long they may run. Zero durations take the backend's defaults. Grace is the executor's
// SIGTERM-to-SIGKILL interval (zero: the backend default); only tests change it. KeepSpills keeps
// spill files after close, for a caller that outlives the tools (dsh call). Policy, when set,
// decides which bash commands run; NoRedact turns off the redaction of the harness's secrets
// from results (see guard).
type config struct {
	Persistent bool
	Workdir    string
	Timeout    time.Duration
	MaxTimeout time.Duration
	Grace      time.Duration
	Sandbox    bash.Sandbox // every command's sandbox policy (zero: off)
	KeepSpills bool         // leave spill files in place when the tools close (dsh call)
	Logger     *slog.Logger
	Policy     *bashpolicy.Policy
	NoRedact   bool
}

// toolset is the tools dsh serves and the provider behind them: the one-shot bash tools over a
// local executor, or the persistent shells. Past newToolset nothing depends on which one it is.
// It is safe for concurrent use.
type toolset struct {
	dir      string // absolute: where commands start, and the base of a relative workdir argument
	reg      tools.Registry
	list     []*tools.Tool
	hint     string // a line for the model, sent as the MCP server instructions
	provider tools.Provider
	// ex is the one-shot tools' executor (nil with the persistent shells). The toolset made it
	// and owns it: the provider stops what its tools started, ex.Close stops the rest (processes
	// a foreground command left behind) and removes the spill files unless they are kept.
	ex *bashlocal.Executor
	// stage is the permission policy in front of the tools, nil without one (see guard).
	stage *bashpolicy.Stage
	// redact hides the harness's secrets in text that leaves outside a result (progress
	// messages); nil when nothing is redacted.
	redact func(string) string
}

// newToolset builds the tools for cfg. agents finds the live session for an owner token when
// a background task ends (nil: the last agent seen with the token); it is unused with
// cfg.Persistent. It returns an error naming the bad setting when the backend refuses cfg.
func newToolset(cfg config, agents func(owner string) (*tools.Agent, bool)) (*toolset, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	dir, err := resolveWorkdir(cfg.Workdir)
	if err != nil {
		return nil, err
	}
	cfg.Workdir = dir
	ts := &toolset{dir: dir}
	if cfg.Persistent {
		sh, err := persistentbash.New(persistentbash.Config{Workdir: cfg.Workdir, Timeout: cfg.Timeout, Sandbox: cfg.Sandbox})
		if err != nil {
			return nil, err
		}
		ts.provider, ts.hint = sh, persistentbash.PromptHint
	} else {
		ex, err := bashlocal.New(bashlocal.Config{
			Limits:     bash.Limits{Timeout: cfg.Timeout, MaxTimeout: cfg.MaxTimeout, Grace: cfg.Grace},
			Workdir:    cfg.Workdir,
			KeepSpills: cfg.KeepSpills,
			Sandbox:    cfg.Sandbox,
			Logger:     cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		tc := toolbash.Config{Logger: cfg.Logger, Agents: agents}
		if cfg.Sandbox.Enabled() {
			// Leaving the sandbox is asked by the stage guard adds; the tool checks the approval.
			tc.ApproveUnsandboxed = approvedUnsandboxed
		}
		set, err := toolbash.New(ex, tc)
		if err != nil {
			_ = ex.Close(context.Background())
			return nil, err
		}
		ts.provider, ts.hint, ts.ex = set, toolbash.PromptHint, ex
	}
	ts.list = ts.guard(cfg, ts.provider.Tools())
	for _, t := range ts.list {
		if _, err := ts.reg.Register(t); err != nil {
			_ = ts.close(context.Background())
			return nil, err
		}
	}
	return ts, nil
}

// close stops the completion notices and kills every process the tools started: the provider
// stops its calls, tasks and shells, then the executor, when there is one, stops what is left
// (ctx bounds the grace periods). It returns both errors, joined.
func (ts *toolset) close(ctx context.Context) error {
	err := ts.provider.Close(ctx)
	if ts.ex != nil {
		err = errors.Join(err, ts.ex.Close(ctx))
	}
	return err
}

// running reports whether owner has a background task running. The persistent shells run
// nothing between calls.
func (ts *toolset) running(owner string) bool {
	if ts.ex == nil {
		return false
	}
	for _, task := range ts.ex.List() {
		if task.Status() != bash.TaskRunning {
			continue
		}
		if o, ok := ts.ex.OwnerOf(task.ID()); ok && string(o) == owner {
			return true
		}
	}
	return false
}

// mcpTools returns the MCP definitions of the tools sorted by name, the order of tools/list.
// The input schema is the tool's Parameters bytes as the tools package derived them, so an MCP
// client sees exactly what any other harness shows the model; the output schema describes the
// facts every successful result carries as structuredContent; the title and the hints are the
// ones the tool's own package set.
func (ts *toolset) mcpTools() []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(ts.list))
	for _, t := range ts.list {
		out = append(out, mcpTool(t))
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// mcpTool returns the MCP definition of t. Every hint of t's annotations is set explicitly,
// because some clients require all of them; a tool without annotations gets none.
func mcpTool(t *tools.Tool) *mcp.Tool {
	m := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: json.RawMessage(t.Parameters)}
	if t.OutputSchema != nil {
		m.OutputSchema = json.RawMessage(t.OutputSchema)
	}
	if t.Annotations != nil {
		a := *t.Annotations // the SDK's pointers must not reach into the shared tool
		m.Annotations = &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    a.ReadOnlyHint,
			DestructiveHint: &a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint,
			OpenWorldHint:   &a.OpenWorldHint,
		}
	}
	return m
}

// resolveWorkdir returns dir made absolute and checked to be a directory; "" means the current
// directory. It returns an error naming dir when it does not exist or is not a directory.
func resolveWorkdir(dir string) (string, error) {
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("-workdir %s: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("-workdir %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("-workdir %s: not a directory", dir)
	}
	return abs, nil
}

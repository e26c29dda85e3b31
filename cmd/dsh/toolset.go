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
	toolbash "github.com/dsh-go/dsh/tool-bash"
	persistentbash "github.com/dsh-go/dsh/tool-bash-persistent"
	"github.com/dsh-go/dsh/tools"
)

// config is what the command line says about the tools: which ones, where commands start and
// how long they may run. Zero durations take the backend's defaults. Grace is the executor's
// SIGTERM-to-SIGKILL interval (zero: the backend default); only tests change it. KeepSpills keeps
// spill files after close, for a caller that outlives the tools (dsh call).
type config struct {
	Persistent bool
	Workdir    string
	Timeout    time.Duration
	MaxTimeout time.Duration
	Grace      time.Duration
	KeepSpills bool // leave spill files in place when the tools close (dsh call)
	Logger     *slog.Logger
}

// toolset is the tools dsh serves and the backend that runs them: the local executor with the
// one-shot bash tools, or the persistent shells. It is safe for concurrent use.
type toolset struct {
	dir   string // absolute: where commands start, and the base of a relative workdir argument
	reg   tools.Registry
	list  []*tools.Tool
	hint  string // a line for the model, sent as the MCP server instructions
	ex    *bashlocal.Executor
	set   *toolbash.Set
	shell *persistentbash.Shells
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
		sh, err := persistentbash.New(persistentbash.Config{Workdir: cfg.Workdir, Timeout: cfg.Timeout})
		if err != nil {
			return nil, err
		}
		ts.shell = sh
		ts.list = []*tools.Tool{sh.Tool()}
		ts.hint = toolbash.PromptHint + " The bash shell keeps its state (working directory, variables) between calls of this session."
	} else {
		ex, err := bashlocal.New(bashlocal.Config{
			Workdir:    cfg.Workdir,
			Timeout:    cfg.Timeout,
			MaxTimeout: cfg.MaxTimeout,
			Grace:      cfg.Grace,
			KeepSpills: cfg.KeepSpills,
			Logger:     cfg.Logger,
		})
		if err != nil {
			return nil, err
		}
		set, err := toolbash.New(ex, toolbash.Config{Logger: cfg.Logger, Agents: agents})
		if err != nil {
			_ = ex.Close(context.Background())
			return nil, err
		}
		ts.ex, ts.set = ex, set
		ts.list = set.Tools()
		ts.hint = toolbash.PromptHint
	}
	for _, t := range ts.list {
		if _, err := ts.reg.Register(t); err != nil {
			_ = ts.close(context.Background())
			return nil, err
		}
	}
	return ts, nil
}

// release ends what owner (a session that went away) still has running: its background tasks
// are killed and its persistent shell is closed with every process it started. It returns the
// errors of the kills and of the shell's close, joined.
func (ts *toolset) release(owner string) error {
	if ts.shell != nil {
		return ts.shell.Release(owner)
	}
	var errs []error
	for _, task := range ts.ex.List() {
		if o, ok := ts.ex.OwnerOf(task.ID()); !ok || string(o) != owner {
			continue
		}
		if task.Status() != bash.TaskRunning {
			continue
		}
		if _, err := ts.ex.Kill(task.ID()); err != nil && !errors.Is(err, bash.ErrUnknownTask) {
			errs = append(errs, fmt.Errorf("kill %s: %w", task.ID(), err))
		}
	}
	return errors.Join(errs...)
}

// close stops the completion notices and kills every process the tools started: it closes the
// executor (bounded by ctx for the grace period) or every persistent shell. It returns what
// the backend's close returned.
func (ts *toolset) close(ctx context.Context) error {
	if ts.shell != nil {
		return ts.shell.Close()
	}
	ts.set.Close()
	return ts.ex.Close(ctx)
}

// annotation is what MCP clients are told about a tool beyond its schema: a display title and
// the behaviour hints. Every hint is set explicitly, because some clients require all of them.
type annotation struct {
	title                                   string
	readOnly, destructive, idempotent, open bool
}

// annotations holds the hints of every tool dsh serves, by name; the persistent bash shares the
// name "bash" and the hints of the one-shot bash.
var annotations = map[string]annotation{
	"bash":        {title: "Run a bash command", destructive: true, open: true},
	"bash_output": {title: "Read a background bash task's output", readOnly: true},
	"bash_kill":   {title: "Kill a background bash task", destructive: true, idempotent: true},
}

// mcpTools returns the MCP definitions of the tools sorted by name, the order of tools/list.
// The input schema
// is the tool's Parameters bytes as the tools package derived them, so an MCP client sees
// exactly what any other harness shows the model.
func (ts *toolset) mcpTools() []*mcp.Tool {
	out := make([]*mcp.Tool, 0, len(ts.list))
	for _, t := range ts.list {
		a := annotations[t.Name]
		title := a.title
		if ts.shell != nil && t.Name == "bash" {
			title = "Run a command in a persistent bash shell"
		}
		out = append(out, &mcp.Tool{
			Name:        t.Name,
			Title:       title,
			Description: t.Description,
			InputSchema: json.RawMessage(t.Parameters),
			Annotations: &mcp.ToolAnnotations{
				Title:           title,
				ReadOnlyHint:    a.readOnly,
				DestructiveHint: &a.destructive,
				IdempotentHint:  a.idempotent,
				OpenWorldHint:   &a.open,
			},
		})
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
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

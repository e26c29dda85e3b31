package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/signal"
	"strings"

	"github.com/dsh-go/dsh/internal/supervisor"
	"github.com/dsh-go/dsh/tools"
)

// callOwner is the owner token of `dsh call`: one call, one session.
const callOwner = "dsh-call"

// runCall is `dsh call TOOL JSON`: it runs one call through the same tools and registry the MCP
// server uses and prints the model-facing text (or, with -present, one JSON object). It
// returns exitOK for a successful result, exitTool for a tool error and exitUsage for a bad
// command line. Spill files the text names are kept, and their directory is named on stderr.
func runCall(args []string, stdout, stderr io.Writer) int {
	f := newFlags("call", stderr, true, true)
	rest, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(rest) != 2 {
		fmt.Fprintf(stderr, "dsh call: want TOOL and JSON arguments, got %d argument(s)\n%s", len(rest), usage)
		return exitUsage
	}
	if err := protect(); err != nil {
		fmt.Fprintf(stderr, "dsh call: %v\n", err)
		return exitTool
	}
	ctx, stop := signal.NotifyContext(context.Background(), supervisor.Terminating()...)
	defer stop()
	cfg := f.config(stderr)
	// The printed text may name a spill file holding the full output: it must outlive dsh call.
	cfg.KeepSpills = true
	ts, err := newToolset(cfg, nil)
	if err != nil {
		fmt.Fprintf(stderr, "dsh call: %v\n", err)
		return exitUsage
	}
	call := tools.Call{ID: "1", Name: rest[0], Args: json.RawMessage(rest[1]), Agent: &tools.Agent{Owner: callOwner, Session: newSessionID(), Dir: ts.dir}}
	res := ts.reg.Execute(ctx, call)
	closeCtx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := ts.close(closeCtx); err != nil {
		fmt.Fprintf(stderr, "dsh call: close: %v\n", err)
	}
	if ts.ex != nil {
		if dir := ts.ex.SpillDir(); dir != "" {
			fmt.Fprintf(stderr, "dsh call: spill files are kept in %s; remove it when done\n", dir)
		}
	}
	if f.present {
		if err := writeJSON(stdout, presentation(ts, call, res)); err != nil {
			fmt.Fprintf(stderr, "dsh call: %v\n", err)
			return exitUsage
		}
	} else {
		text := res.Text()
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if _, err := io.WriteString(stdout, text); err != nil {
			return exitUsage
		}
	}
	if res.IsError {
		return exitTool
	}
	return exitOK
}

// presented is the JSON `dsh call -present` prints: the model-facing text, whether it is an
// error (and its code), and the call's and result's presentation (null when the tool has none
// for these arguments).
type presented struct {
	Text    string      `json:"text"`
	IsError bool        `json:"isError"`
	Code    string      `json:"code,omitempty"`
	Call    *callView   `json:"call"`
	Result  *resultView `json:"result"`
}

type callView struct {
	Title    string            `json:"title,omitempty"`
	Kind     tools.Kind        `json:"kind,omitempty"`
	RawInput any               `json:"rawInput,omitempty"`
	Content  []tools.Content   `json:"content,omitempty"`
	Terminal *terminalCallView `json:"terminal,omitempty"`
}

type terminalCallView struct {
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	Cwd         string `json:"cwd,omitempty"`
}

type resultView struct {
	Title    string              `json:"title,omitempty"`
	Content  []tools.Content     `json:"content,omitempty"`
	Terminal *terminalResultView `json:"terminal,omitempty"`
}

type terminalResultView struct {
	Output   string `json:"output"`
	ExitCode *int   `json:"exitCode,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

// presentation runs the tool's presenters on call and res.
func presentation(ts *toolset, call tools.Call, res tools.Result) presented {
	p := presented{Text: res.Text(), IsError: res.IsError, Code: res.Code}
	t, ok := ts.reg.Lookup(call.Name)
	if !ok {
		return p
	}
	if t.PresentCall != nil {
		if v, ok := t.PresentCall(call.Args); ok {
			p.Call = &callView{Title: v.Title, Kind: v.Kind, RawInput: v.RawInput, Content: v.Content}
			if c := v.Terminal; c != nil {
				p.Call.Terminal = &terminalCallView{Command: c.Command, Description: c.Description, Cwd: c.Cwd}
			}
		}
	}
	if t.PresentResult != nil {
		if v, ok := t.PresentResult(call.Args, res); ok {
			p.Result = &resultView{Title: v.Title, Content: v.Content}
			if r := v.Terminal; r != nil {
				p.Result.Terminal = &terminalResultView{Output: r.Output, ExitCode: r.ExitCode, Signal: r.Signal}
			}
		}
	}
	return p
}

// runTools is `dsh tools`: the tools' MCP definitions as a JSON array, the way tools/list
// returns them.
func runTools(args []string, stdout, stderr io.Writer) int {
	f := newFlags("tools", stderr, false, false)
	rest, code, ok := f.parse(args)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "dsh tools: unexpected arguments %q\n", rest)
		return exitUsage
	}
	ts, err := newToolset(f.config(stderr), nil)
	if err != nil {
		fmt.Fprintf(stderr, "dsh tools: %v\n", err)
		return exitUsage
	}
	defer ts.close(context.Background())
	if err := writeJSON(stdout, ts.mcpTools()); err != nil {
		fmt.Fprintf(stderr, "dsh tools: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// writeJSON writes v to w as indented JSON without HTML escaping, so texts read as the model
// reads them.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

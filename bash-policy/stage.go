package bashpolicy

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"

	"github.com/dsh-go/dsh/tools"
)

// StageConfig says which calls a [Stage] judges and how their shells behave.
//
// Tools names the tools whose calls carry a bash command in a "command" argument (and, for a
// one-shot tool, a "workdir" argument); nil means just "bash". Workspace is the directory
// commands may write into when the calling agent has no directory of its own. Persistent says
// that the tool keeps one shell per owner between calls, as the persistent bash does: the stage
// then remembers, per owner, the directories the shell may have moved to, since a cd in one call
// changes where the relative paths of the next one point.
type StageConfig struct {
	Tools      []string
	Workspace  string
	Persistent bool
}

// Stage is a policy at work in front of the bash tools: its Before method is a [tools.Before]
// stage. Create it with [Policy.Stage]. It is safe for concurrent use.
type Stage struct {
	p      *Policy
	cfg    StageConfig
	tools  map[string]bool
	home   string
	cdpath bool

	mu    sync.Mutex
	where map[string]where  // owner → where its shell may be (Persistent only)
	roots map[string]string // workspace → its real path
}

// where is what a stage remembers of one persistent shell.
type where struct {
	dirs []string
	lost bool
}

// Stage returns the stage that judges, with p, the calls cfg describes.
func (p *Policy) Stage(cfg StageConfig) *Stage {
	if cfg.Tools == nil {
		cfg.Tools = []string{"bash"}
	}
	s := &Stage{p: p, cfg: cfg, tools: map[string]bool{}, where: map[string]where{}, roots: map[string]string{},
		home: os.Getenv("HOME"), cdpath: os.Getenv("CDPATH") != ""}
	for _, t := range cfg.Tools {
		s.tools[t] = true
	}
	return s
}

// Texts of the stage's refusals, after the reason.
const (
	denyPrefix = "the command policy denies this command: "
	denyAdvice = ". Do not try to get the same effect another way (another spelling, a wrapper, a script, another shell); " +
		"if the task needs it, ask the user to run it or to change the policy."
	tooLongPrefix = "the command policy refuses this command: "
)

// Before judges call (see [tools.Before]): a call of one of the stage's tools is decided on its
// command, in the directory it would run in; any other call, and a call whose arguments the
// tool itself will refuse (not a JSON object, no command string), is allowed. A deny's reason
// names the part denied and the rule; an ask's reason names what needs approval, its prompt
// shows the whole command, and its grants are the asked parts, so that an approval for the
// session covers exactly those.
func (s *Stage) Before(ctx context.Context, call tools.Call) tools.Decision {
	if !s.tools[call.Name] {
		return tools.Allow()
	}
	// Decoded as the tools package decodes arguments (the last of duplicate keys wins), so the
	// command judged is the command run.
	var args map[string]any
	if err := json.Unmarshal(call.Args, &args); err != nil {
		return tools.Allow()
	}
	command, ok := args["command"].(string)
	if !ok {
		return tools.Allow()
	}
	workspace := s.cfg.Workspace
	if call.Agent != nil && call.Agent.Dir != "" {
		workspace = call.Agent.Dir
	}
	here := Where{Workspace: workspace, Home: s.home, CDPath: s.cdpath, root: s.root(workspace)}
	owner := ""
	if call.Agent != nil {
		owner = call.Agent.Owner
	}
	if s.cfg.Persistent {
		s.mu.Lock()
		w, ok := s.where[owner]
		s.mu.Unlock()
		if ok {
			here.Dirs, here.Lost = w.dirs, w.lost
		}
	} else {
		workdir, _ := args["workdir"].(string)
		here.Dirs = []string{(&tools.Agent{Dir: workspace}).ResolveDir(workdir)} // the tool's own rule
	}
	d := s.p.Decide(command, here)
	if s.cfg.Persistent && d.Action != tools.VerdictDeny && owner != "" {
		// The command may run: later commands start where it may leave the shell.
		s.mu.Lock()
		s.where[owner] = where{dirs: d.Dirs, lost: d.Lost}
		s.mu.Unlock()
	}
	return toDecision(d, command)
}

// root returns the real path of workspace, looked up once: a workspace is a directory the
// harness chose, not one a command moves.
func (s *Stage) root(workspace string) string {
	if workspace == "" {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.roots[workspace]
	if !ok {
		r = realPath(workspace)
		if len(s.roots) < 64 {
			s.roots[workspace] = r
		}
	}
	return r
}

// Forget drops what the stage remembers of owner's shell, for instance when its session ends.
func (s *Stage) Forget(owner string) {
	s.mu.Lock()
	delete(s.where, owner)
	s.mu.Unlock()
}

// toDecision turns the decision d about command into the stage's answer.
func toDecision(d Decision, command string) tools.Decision {
	switch d.Action {
	case tools.VerdictAllow:
		return tools.Allow()
	case tools.VerdictDeny:
		if d.Commands == 0 && len(d.Findings) == 1 && d.Findings[0].Rule == "" && !d.Findings[0].Unknown {
			return tools.Decision{Verdict: tools.VerdictDeny, Reason: tooLongPrefix + d.Reason() + "."} // over MaxCommandBytes
		}
		return tools.Decision{Verdict: tools.VerdictDeny, Reason: denyPrefix + d.Reason() + denyAdvice}
	}
	var b strings.Builder
	b.WriteString("Run this command?\n\n")
	b.WriteString(command)
	b.WriteString("\n\nThe command policy asks because:")
	var grants []string
	for _, f := range d.Findings {
		if f.Action != tools.VerdictAsk {
			continue
		}
		b.WriteString("\n- " + f.String())
		grants = append(grants, f.Why+"\x00"+f.Subject)
	}
	if d.Dropped > 0 {
		// Parts the decision does not list cannot be granted by name: no approval for the session.
		grants = nil
	}
	return tools.Decision{Verdict: tools.VerdictAsk, Reason: d.Reason(), Prompt: b.String(), Grants: grants}
}

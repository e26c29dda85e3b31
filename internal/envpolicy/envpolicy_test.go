package envpolicy

import (
	"slices"
	"strings"
	"testing"
)

func TestEnviron(t *testing.T) {
	ambient := []string{"PATH=/bin", "API_KEY=x", "broken", "=x", "TERM=xterm", "dsh_x=1", "Github_Token=t", "KEEP_TOKEN=k", "HOME=/h"}
	tests := []struct {
		name  string
		p     Policy
		extra map[string]string
		want  string
	}{
		{"default", Default(), nil,
			"GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 HOME=/h NO_COLOR=1 PAGER=cat PATH=/bin TERM=dumb"},
		{"keep", Policy{Patterns: DefaultPatterns(), Prefixes: DefaultPrefixes(), Keep: []string{"KEEP_TOKEN"}}, nil,
			"GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 HOME=/h KEEP_TOKEN=k NO_COLOR=1 PAGER=cat PATH=/bin TERM=dumb"},
		{"extra wins over scrub and overrides", Default(), map[string]string{"API_KEY": "mine", "TERM": "xterm-256color"},
			"API_KEY=mine GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 HOME=/h NO_COLOR=1 PAGER=cat PATH=/bin TERM=xterm-256color"},
		{"zero policy scrubs nothing", Policy{}, nil,
			"API_KEY=x GIT_PAGER=cat GIT_TERMINAL_PROMPT=0 Github_Token=t HOME=/h KEEP_TOKEN=k NO_COLOR=1 PAGER=cat PATH=/bin TERM=dumb dsh_x=1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(tt.p.Environ(ambient, tt.extra), " ")
			if got != tt.want {
				t.Errorf("Environ =\n %s\nwant\n %s", got, tt.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name                     string
		patterns, prefixes, keep []string
		wantErr                  string
		scrubbed, passed         []string
	}{
		{name: "nil means defaults", scrubbed: []string{"AWS_SECRET_ACCESS_KEY", "DSH_X", "npm_token"}, passed: []string{"PATH", "HOME"}},
		{name: "empty means none", patterns: []string{}, prefixes: []string{}, passed: []string{"API_KEY", "DSH_X"}},
		{name: "keep", keep: []string{"GITHUB_TOKEN"}, scrubbed: []string{"GH_TOKEN"}, passed: []string{"GITHUB_TOKEN"}},
		{name: "bad pattern", patterns: []string{"A-B"}, wantErr: `Config.ScrubPatterns entry "A-B" must be letters, digits and underscores`},
		{name: "empty prefix", prefixes: []string{""}, wantErr: `Config.ScrubPrefixes entry "" must be letters`},
		{name: "bad keep", keep: []string{"A=B"}, wantErr: `Config.KeepEnv entry "A=B" is not a variable name`},
		{name: "dash keep", keep: []string{"-x"}, wantErr: `is not a variable name`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.patterns, tt.prefixes, tt.keep)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range tt.scrubbed {
				if !p.Scrubbed(n) {
					t.Errorf("%s not scrubbed", n)
				}
			}
			for _, n := range tt.passed {
				if p.Scrubbed(n) {
					t.Errorf("%s scrubbed", n)
				}
			}
		})
	}
}

func TestDefaultsAreCopies(t *testing.T) {
	DefaultPatterns()[0] = "X"
	DefaultPrefixes()[0] = "X"
	TerminalOverrides()[0] = "X"
	if DefaultPatterns()[0] != "KEY" || DefaultPrefixes()[0] != "DSH_" || TerminalOverrides()[0] != "NO_COLOR=1" {
		t.Fatal("a caller changed the defaults")
	}
}

func TestRemoved(t *testing.T) {
	got := Default().Removed([]string{"PATH=/bin", "B_TOKEN=2", "A_KEY=1", "noeq"})
	if want := []string{"A_KEY=1", "B_TOKEN=2"}; !slices.Equal(got, want) {
		t.Errorf("Removed = %v, want %v", got, want)
	}
}

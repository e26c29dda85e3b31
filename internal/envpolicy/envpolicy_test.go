package envpolicy

import (
	"fmt"
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

// TestCarriers checks the default policy on the carriers a red team found the first rules
// missed, and on ordinary variables that must pass.
func TestCarriers(t *testing.T) {
	scrubbed := []string{
		"DATABASE_URL=postgres://app:s3cr3t@db.internal:5432/app",
		"REDIS_URL=redis://:hunter22@cache:6379/0",
		"MYSQL_PWD=hunter22",
		"NPM_CONFIG__AUTH=dXNlcjpwYXNz",
		"GH_PAT=anything",
		"CI_JOB_JWT=anything",
		"SENTRY_DSN=https://0123abcd@o1.ingest.sentry.io/2",
		"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0/B0/x",
		"DOCKER_AUTH_CONFIG={}",
		"SSH_AUTH_SOCK=/tmp/ssh-x/agent.1",
		"COOKIE=a=b", "BEARER=x", "SESSION=x", "NETRC=/home/u/.netrc",
		"SESSION_MANAGER=local/h:@/tmp/.ICE-unix/1,unix/h:/tmp/.ICE-unix/1",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
		"HTTP_PROXY=http://user:pw@proxy:3128",
		"MY_HELPER=ghp_0123456789abcdefghijABCDEFGHIJ",
		"OTHER=Bearer sk-ant-0123456789abcdefghijklmnop",
		"AWS_ID=AKIAABCDEFGHIJKLMNOP",
		"SLACK=xoxb-1234567890-abcdef",
		"JWT_LIKE=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlMTIz",
		"PEM=-----BEGIN OPENSSH PRIVATE KEY-----",
		"GITHUB_TOKEN=x", "AWS_SECRET_ACCESS_KEY=x", "DSH_SESSION_ID=x",
		"DB_PASS=x", "SMTP_PW=x", "SSHPASS=x", "pass=x",
		"CONN=Server=db;Database=app;User Id=sa;Password=hunter22;",
		"ODBC=Driver={x};Uid=sa;password=hunter22",
		"AZ=DefaultEndpointsProtocol=https;AccountName=a;AccountKey=bXlrZXk=;EndpointSuffix=core.windows.net",
		"BUS=Endpoint=sb://x.servicebus.windows.net/;SharedAccessKeyName=r;SharedAccessKey=abc=",
		"SONAR=squ_0123456789abcdef0123456789abcdef01234567",
		"SONAR_P=sqp_0123456789abcdef0123456789abcdef01234567",
		"HF=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
		"PYPI=pypi-AgEIcHlwaS5vcmc" + strings.Repeat("A", 50),
		"SHOP=shpat_0123456789abcdef0123456789abcdef",
		"DO=dop_v1_" + strings.Repeat("ab", 32),
		"SG=SG." + strings.Repeat("a", 22) + "." + strings.Repeat("b", 43),
		"AGE=AGE-SECRET-KEY-1" + strings.Repeat("Q", 58),
		"DBX=dapi0123456789abcdef0123456789abcdef",
		"GLDT=gldt-0123456789abcdefghij",
	}
	passed := []string{
		"PATH=/usr/bin:/bin", "PWD=/home/u", "OLDPWD=/tmp", "HOME=/home/u", "SHELL=/bin/bash",
		"LANG=C.UTF-8", "TERM=xterm", "USER=u", "GOPATH=/home/u/go", "MANPATH=/usr/man",
		"PYTHONPATH=/x", "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.com",
		"XDG_SESSION_TYPE=wayland", "XDG_SESSION_ID=3", "DESKTOP_SESSION=gnome",
		"HTTP_PROXY_HOST=proxy", "REPO=ssh://git@github.com/org/repo", "URL=https://example.com/a?b=c",
		"EDITOR=vim", "PATHEXT=.x", "COMPOSE_PROJECT_NAME=app", "PATCH_LEVEL=3",
		"BYPASS_CACHE=1", "PASSES=3", "PWDX=1", "NOTE=use Password= in the string", "Q=squ_short",
		"HFX=hf_short", "WORDS=dapi is a word",
	}
	p := Default()
	for _, kv := range scrubbed {
		name, value, _ := strings.Cut(kv, "=")
		if !p.ScrubbedEntry(name, value) {
			t.Errorf("%s passes; want it scrubbed", kv)
		}
	}
	for _, kv := range passed {
		name, value, _ := strings.Cut(kv, "=")
		if p.ScrubbedEntry(name, value) {
			t.Errorf("%s is scrubbed; want it passed", kv)
		}
	}
	// KeepEnv passes a carrier on purpose; an empty pattern list does not turn carriers off.
	keep, _ := New(nil, nil, []string{"DATABASE_URL"})
	if keep.ScrubbedEntry("DATABASE_URL", "postgres://a:b@h/d") {
		t.Error("a kept name is scrubbed")
	}
	none, _ := New([]string{}, []string{}, nil)
	if !none.ScrubbedEntry("MYSQL_PWD", "x") || !none.ScrubbedEntry("X", "postgres://a:b@h/d") {
		t.Error("with no patterns, the carrier rules are off")
	}
	if got := p.Removed(append(scrubbed[:2:2], "PATH=/bin")); len(got) != 2 {
		t.Errorf("Removed = %v; want the two URL carriers", got)
	}
}

// FuzzSecretValue checks that the literal prefilter of SecretValue never changes its answer: it
// is the full expression's, for any value. The seeds hold one value of every shape.
func FuzzSecretValue(f *testing.F) {
	for _, v := range []string{
		"postgres://app:s3cr3t@db:5432/app", "ghp_0123456789abcdefghijABCDEFGHIJ", "github_pat_0123456789abcdefghij_x",
		"glpat-0123456789abcdefghij", "xoxb-1234567890-abcdef", "AKIAABCDEFGHIJKLMNOP", "x ASIAABCDEFGHIJKLMNOP",
		"sk-ant-0123456789abcdefghijklmnop", "rk_live_0123456789abcdef", "AIza" + strings.Repeat("a", 35),
		"npm_" + strings.Repeat("b", 36), "eyJhbGciOiJI.eyJzdWIiOiIx.c2lnbmF0dXJl", "-----BEGIN RSA PRIVATE KEY-----",
		"Password=x;", "AccountKey=k=", "squ_" + strings.Repeat("0", 40), "hf_" + strings.Repeat("a", 34),
		"pypi-AgEIcHlwaS5vcmc" + strings.Repeat("A", 50), "shpat_" + strings.Repeat("0", 32), "dop_v1_" + strings.Repeat("a", 64),
		"SG." + strings.Repeat("a", 22) + "." + strings.Repeat("b", 43), "AGE-SECRET-KEY-1" + strings.Repeat("Q", 58),
		"dapi" + strings.Repeat("0", 32), "gldt-0123456789abcdefghij",
		"/usr/bin:/bin", "https://example.com/a?b=c", "",
	} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if got, want := SecretValue(v), secretValue().MatchString(v); got != want {
			t.Fatalf("SecretValue(%q) = %v; the expression says %v", v, got, want)
		}
	})
}

// BenchmarkEnviron measures the scrub of an ordinary 40-variable environment, as every command
// start pays it.
func BenchmarkEnviron(b *testing.B) {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/home/u", "LANG=C.UTF-8", "SHELL=/bin/bash"}
	for i := range 36 {
		env = append(env, fmt.Sprintf("VAR_%d=/some/ordinary/value/%d:with-words_and.dots", i, i))
	}
	p := Default()
	for b.Loop() {
		p.Environ(env, nil)
	}
}

package launcher

import (
	"errors"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLauncherFilled(t *testing.T) {
	if !utf8.ValidString(launcher) || strings.Contains(launcher, "NAMES") {
		t.Error("the launcher's variable loop was not filled in")
	}
}

func TestParseStarted(t *testing.T) {
	tests := []struct {
		line string
		want Started
		kind string // "" ok; "launch" a *LaunchError; "bad" another error
	}{
		{"ok 42 12345", Started{PID: 42, Start: "12345"}, ""},
		{"ok 42 ", Started{PID: 42}, ""},
		{"ok x 1", Started{}, "bad"},
		{"ok -3 1", Started{}, "bad"},
		{"err workdir notexist /nope: No such file or directory", Started{}, "launch"},
		{"err bash bash: not found in the remote PATH", Started{}, "launch"},
		{"hello", Started{}, "bad"},
	}
	for _, tt := range tests {
		got, err := ParseStarted(tt.line)
		var le *LaunchError
		switch {
		case tt.kind == "" && (err != nil || got != tt.want):
			t.Errorf("ParseStarted(%q) = %+v, %v; want %+v", tt.line, got, err, tt.want)
		case tt.kind == "launch" && !errors.As(err, &le):
			t.Errorf("ParseStarted(%q) error %v, want a *LaunchError", tt.line, err)
		case tt.kind == "bad" && (err == nil || errors.As(err, &le)):
			t.Errorf("ParseStarted(%q) error %v, want a parse error", tt.line, err)
		}
	}
}

func TestParseReports(t *testing.T) {
	if r, ok := Report([]byte("motd\nM gone unreadable 7:x 9:y\nrest"), "M"); !ok || r != "gone unreadable 7:x 9:y" {
		t.Errorf("Report = %q, %v", r, ok)
	}
	if _, ok := Report([]byte("MX gone"), "M"); ok {
		t.Error("Report found a marker that is only a prefix of another word")
	}
	u, err := ParseStop("gone unreadable 7:x 9:y")
	if err != nil || !reflect.DeepEqual(u, []Unreadable{{"7", "x"}, {"9", "y"}}) {
		t.Errorf("ParseStop = %v, %v", u, err)
	}
	if _, err := ParseStop("survivors 12"); err == nil {
		t.Error("ParseStop accepted survivors")
	}
	a, err := ParseCheck("alive 3 5")
	if err != nil || !reflect.DeepEqual(a, map[int]bool{3: true, 5: true}) {
		t.Errorf("ParseCheck = %v, %v", a, err)
	}
}

// TestArgvAndLine checks that the argument vector and the quoted line run the same program: the
// line through sh, the vector directly.
func TestArgvAndLine(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is needed:", err)
	}
	env, err := EnvEntries(map[string]string{"V": "a'b $x"}, "t-1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Launch{Name: "dsh-test", Marker: "MK", Workdir: "/", Bash: bash, Env: env, Command: `printf '%s|%s' "$V" "$0"`}.Build()
	if err != nil {
		t.Fatal(err)
	}
	byLine, err := exec.Command("sh", "-c", c.Line).Output()
	if err != nil {
		t.Fatal(err)
	}
	byArgv, err := exec.Command(c.Argv[0], c.Argv[1:]...).Output()
	if err != nil {
		t.Fatal(err)
	}
	_, lineOut, _ := strings.Cut(string(byLine), "\n")
	_, argvOut, _ := strings.Cut(string(byArgv), "\n")
	if lineOut != "a'b $x|bash" || argvOut != lineOut {
		t.Errorf("line ran %q, argv ran %q", byLine, byArgv)
	}
	r, ok := Report(byArgv, "MK")
	if !ok {
		t.Fatalf("no control line in %q", byArgv)
	}
	if s, err := ParseStarted(r); err != nil || s.PID <= 0 {
		t.Errorf("ParseStarted(%q) = %+v, %v", r, s, err)
	}
}

package bashpolicy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/tools"
)

// TestBadInput checks the commands the policy refuses to read or cannot parse: never allowed,
// always with a text that says why.
func TestBadInput(t *testing.T) {
	p := mustPolicy(t, `{"default": "allow", "unknown": "ask", "deny": ["rm"]}`)
	where := Where{Workspace: t.TempDir()}

	huge := strings.Repeat("echo hi; ", (1<<20)/9+1)
	d := p.Decide(huge, where)
	if d.Action != tools.VerdictDeny || !strings.Contains(d.Reason(), "bytes long, more than the 131072 bytes the command policy reads; split it into smaller commands") {
		t.Errorf("1 MB command: %s %q", d.Action, d.Reason())
	}
	justUnder := strings.Repeat("echo hi; ", MaxCommandBytes/9)
	if d := p.Decide(justUnder, where); d.Action != tools.VerdictAllow || d.Commands != MaxCommandBytes/9 {
		t.Errorf("%d-byte command: %s, %d commands", len(justUnder), d.Action, d.Commands)
	}

	for _, cmd := range []string{`echo "x`, "if true; then", "ls )", "a=(", "cat <<EOF\nno end", "$((", "echo ${x"} {
		d := p.Decide(cmd, where)
		if d.Action != tools.VerdictAsk || len(d.Findings) != 1 || !d.Findings[0].Unknown || !strings.Contains(d.Reason(), "could not be parsed (") {
			t.Errorf("%q: %s %q; want unknown, saying it could not be parsed", cmd, d.Action, d.Reason())
		}
	}

	deep := strings.Repeat("eval ", maxDepth+2) + "rm x" // each eval parses the rest once more
	if d := p.Decide(deep, where); d.Action == tools.VerdictAllow || !strings.Contains(d.Reason(), "more than 16 levels deep") {
		t.Errorf("deep nesting: %s %q", d.Action, d.Reason())
	}
}

// TestFindingsBound checks that a command with more findings than a decision lists still counts
// every one of them.
func TestFindingsBound(t *testing.T) {
	p := mustPolicy(t, `{"default": "ask"}`)
	d := p.Decide(strings.Repeat("make; ", 100), Where{Workspace: "/w"})
	if len(d.Findings) != maxFindings || d.Dropped != 100-maxFindings || !strings.HasSuffix(d.Reason(), "and 97 more") {
		t.Errorf("%d findings, %d dropped, reason %q", len(d.Findings), d.Dropped, d.Reason())
	}
}

// TestQuotingMatchesBash runs real bash on the spellings the policy resolves to rm, with a PATH
// holding only a stub rm that records that it ran: every spelling the policy judges as rm does
// run rm, and the look-alikes it allows do not.
func TestQuotingMatchesBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	p := mustPolicy(t, `{"default": "allow", "deny": ["rm"]}`)
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "rm"), []byte("#!"+bash+"\necho ran >> \"$MARK\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cmd  string
		runs bool
	}{
		{`r''m x`, true}, {`\rm x`, true}, {`r\m x`, true}, {`"rm" x`, true}, {`"r""m" x`, true},
		{`$'\x72m' x`, true}, {`$'\162\155' x`, true}, {`{rm,-rf,x}`, true}, {`{r,}m x`, true},
		{`echo "rm -rf /"`, false}, {`printf '%s' rm`, false}, {`: rm x`, false}, {`echo rm # ; rm x`, false},
		{"cat <<'EOF'\nrm x\nEOF", false}, {`x=rm`, false},
		{`eval -- 'rm x'`, true}, {`$'\u0072m' x`, true},
		// Arithmetic and subscripted names: bash evaluates the subscript again and runs rm.
		{`[[ -v 'a[$(rm x)]' ]]`, true}, {`[[ 1 -eq 'a[$(rm x)]' ]]`, true}, {`[[ 'a[$(rm x)]' -lt 1 ]]`, true},
		{`a['$(rm x)']=1`, true}, {`echo ${a['$(rm x)']}`, true}, {`x=a[\$\(rm\ x\)]; ((x))`, true},
		{`printf -v 'a[$(rm x)]' v`, true}, {`test -v 'a[$(rm x)]'`, true}, {`[ -v 'a[$(rm x)]' ]`, true},
		{`declare 'a[$(rm x)]=1'`, true}, {`typeset 'a[$(rm x)]=1'`, true}, {`let 'a[$(rm x)]'`, true},
		{`f() { local 'a[$(rm x)]=1'; }; f`, true}, {`(( 'a[$(rm x)]' ))`, true}, {`echo $(( "a[$(rm x)]" ))`, true},
		{`a=(1); unset 'a[$(rm x)]'`, true}, {`y=abc; echo ${y:'a[$(rm x)]'}`, true},
		{`sleep 0 & wait -n -p 'a[$(rm x)]'`, true},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		mark := filepath.Join(dir, "mark")
		cmd := exec.Command(bash, "-c", tt.cmd)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + bin, "MARK=" + mark}
		_ = cmd.Run() // a look-alike may fail (cat is not on PATH): what matters is whether rm ran
		_, err := os.Stat(mark)
		ran := err == nil
		d := p.Decide(tt.cmd, Where{Workspace: dir})
		if ran != tt.runs || (d.Action == tools.VerdictDeny) != tt.runs {
			t.Errorf("%q: bash ran rm: %v; policy: %s; want both to say %v", tt.cmd, ran, d.Action, tt.runs)
		}
	}
}

func TestDescribe(t *testing.T) {
	p := mustPolicy(t, `{"default": "ask", "unknown": "deny", "allow": ["ls", "git diff  *"], "ask": ["git push *"], "deny": ["rm"]}`)
	got := p.Describe()
	for _, want := range []string{
		"Allowed: `ls`, `git diff *`.", "Asked (a person must approve): `git push *`.", "Denied: `rm`.",
		"Any other command: asked.", "a syntax error): denied.", "do not try to get the same effect another way",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Describe() = %q\nlacks %q", got, want)
		}
	}
}

package bashpolicy

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-go/dsh/tools"
)

// benchCompound is a 300-byte compound command of the kind a model writes: a loop, pipelines,
// substitutions, a redirection and a here-string.
const benchCompound = `cd src && for f in $(git diff --name-only HEAD~1 -- '*.go'); do ` +
	`grep -n "TODO\|FIXME" "$f" | head -5 || echo "clean: $f"; done; ` +
	`go test ./... 2>&1 | tail -20 > test.log; wc -l < test.log; ` +
	`find . -name '*_test.go' -exec grep -c "func Test" {} + | sort -t: -k2 -n | tail -3; ` +
	`cat <<< "$(date +%s) done" >> status.txt`

// benchScript returns a script of about n bytes: the compound command, functions and here-
// documents repeated, as a long generated script would be.
func benchScript(n int) string {
	unit := benchCompound + "\nbuild() {\n  local out=\"$1\"\n  go build -o \"$out\" ./cmd/... && ls -la \"$out\"\n}\n" +
		"cat <<'EOF' > notes.txt\nrm -rf is only text here\nEOF\nbuild bin/app\n"
	return strings.Repeat(unit, n/len(unit)+1)[:n-n%len(unit)+len(unit)]
}

// benchCommands are the commands of the benchmarks, by name.
func benchCommands() []struct{ name, cmd string } {
	return []struct{ name, cmd string }{{"compound-300B", benchCompound}, {"script-20kB", benchScript(20_000)}}
}

// BenchmarkDecide measures parse + decide of a 300-byte compound command and of a 20 kB script
// under a policy of realistic size; compare with BenchmarkRun/true of bash-local.
func BenchmarkDecide(b *testing.B) {
	p := mustPolicy(b, `{"default": "ask",
		"allow": ["cd", "git diff *", "git status", "grep", "head", "echo", "go test *", "go build *", "tail", "wc", "find", "sort", "cat", "date", "ls", "local", "build"],
		"ask": ["git push *"], "deny": ["rm", "curl", "sudo"]}`)
	ws := b.TempDir()
	where := Where{Workspace: ws, root: realPath(ws)} // as a Stage passes it, resolved once
	for _, bc := range benchCommands() {
		b.Run(bc.name, func(b *testing.B) {
			if d := p.Decide(bc.cmd, where); d.Action != tools.VerdictAllow {
				b.Fatalf("%d bytes: %s %s", len(bc.cmd), d.Action, d.Reason())
			}
			b.SetBytes(int64(len(bc.cmd)))
			b.ReportAllocs()
			for b.Loop() {
				p.Decide(bc.cmd, where)
			}
		})
	}
}

// BenchmarkParse measures the parser alone on the same commands: the floor under BenchmarkDecide.
func BenchmarkParse(b *testing.B) {
	for _, bc := range benchCommands() {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.cmd)))
			b.ReportAllocs()
			for b.Loop() {
				p := parsers.Get().(*syntax.Parser)
				if _, err := p.Parse(strings.NewReader(bc.cmd), ""); err != nil {
					b.Fatal(err)
				}
				parsers.Put(p)
			}
		})
	}
}

package catalog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/scripts/internal/cli"
	"go.uber.org/goleak"
	"golang.org/x/tools/go/packages"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestRepositoryCatalog is the self-check: gen-catalog -check passes on
// this repository. A failure names every violating declaration and every
// stale entry of docs/catalog.md.
func TestRepositoryCatalog(t *testing.T) {
	root, err := cli.FindRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Build(root)
	if err != nil {
		t.Fatalf("gen-catalog cannot load the repository: %v", err)
	}
	for _, v := range res.Violations {
		t.Errorf("violation: %s", v)
	}
	if t.Failed() {
		t.Fatalf("%d doc-comment completeness violation(s); fix the doc comments above, then run %s", len(res.Violations), RegenerateCommand(DefaultOutput))
	}
	page := Render(res.Catalog, DefaultOutput)
	old, err := os.ReadFile(filepath.Join(root, DefaultOutput))
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s does not exist; run %s and commit it", DefaultOutput, RegenerateCommand(DefaultOutput))
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(old) != string(page) {
		for _, f := range Stale(DefaultOutput, old, page) {
			t.Errorf("%s", f)
		}
		t.Fatalf("%s is stale; run %s and commit it", DefaultOutput, RegenerateCommand(DefaultOutput))
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		text string
		kind shape
		ok   bool
	}{
		{"//catalog:service bash/executor", shapeDirective, true},
		{"//catalog:", shapeDirective, true},
		{"// catalog:service x", shapeSpaced, true},
		{"// Catalog:event x", shapeSpaced, true},
		{"//Catalog:service x", shapeCase, true},
		{"//CATALOG:mode emit", shapeCase, true},
		{"//catalgo:service x", shapeNearMiss, true},
		{"//catlog:event x", shapeNearMiss, true},
		{"//catalogue:service x", shapeNearMiss, true},
		{"// catalog: the list of things", 0, false},
		{"//go:build linux", 0, false},
		{"//nolint:unused", 0, false},
		{"//lint:ignore x", 0, false},
		{"//export Foo", 0, false},
		{"// Catalog is the index.", 0, false},
		{"/* catalog:service x */", 0, false},
	}
	for _, tt := range tests {
		kind, _, ok := classify(tt.text)
		if ok != tt.ok || ok && kind != tt.kind {
			t.Errorf("classify(%q) = %v, %v; want %v, %v", tt.text, kind, ok, tt.kind, tt.ok)
		}
	}
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text, name string
		want       bool
	}{
		{"Run runs spec in the foreground.", "spec", true},
		{"Run runs `spec` now.", "spec", true},
		{"Resolve checks req.Command.", "req", true},
		{"It uses the specification.", "spec", false},
		{"It uses a_spec.", "spec", false},
		{"It uses spec2.", "spec", false},
		{"spec", "spec", true},
		{"Δspec is not it, but spec is.", "spec", true},
		{"", "x", false},
	}
	for _, tt := range tests {
		if got := mentions(tt.text, tt.name); got != tt.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", tt.text, tt.name, got, tt.want)
		}
	}
}

func TestBeginsWith(t *testing.T) {
	tests := []struct {
		text, name string
		article    bool
		want       bool
	}{
		{"Executor runs commands.", "Executor", false, true},
		{"Executor's methods are safe.", "Executor", false, true},
		{"Executors run commands.", "Executor", false, false},
		{"An Executor runs commands.", "Executor", true, true},
		{"An Executor runs commands.", "Executor", false, false},
		{"The Executor runs commands.", "Executor", true, true},
		{"  Run runs.", "Run", false, true},
		{"Running.", "Run", false, false},
	}
	for _, tt := range tests {
		if got := beginsWith(tt.text, tt.name, tt.article); got != tt.want {
			t.Errorf("beginsWith(%q, %q, %v) = %v, want %v", tt.text, tt.name, tt.article, got, tt.want)
		}
	}
}

func TestRelLink(t *testing.T) {
	tests := []struct{ dir, file, want string }{
		{"docs", "bash/executor.go", "../bash/executor.go"},
		{".", "bash/executor.go", "bash/executor.go"},
		{"site/api", "bash/executor.go", "../../bash/executor.go"},
		{"docs", "docs/x.go", "x.go"},
		{"docs/a", "docs/b/x.go", "../b/x.go"},
	}
	for _, tt := range tests {
		if got := relLink(tt.dir, tt.file); got != tt.want {
			t.Errorf("relLink(%q, %q) = %q, want %q", tt.dir, tt.file, got, tt.want)
		}
	}
}

func TestAnchorsStayDistinct(t *testing.T) {
	keys := []string{"a/b-c", "a-b/c", "a/b/c", "a-b-c"}
	seen := map[string]string{}
	for _, k := range keys {
		if !validKey(k) {
			t.Fatalf("%q should be a valid key", k)
		}
		a := Anchor(k, false)
		if other, dup := seen[a]; dup {
			t.Errorf("keys %q and %q share the anchor %q", other, k, a)
		}
		seen[a] = k
		if got := anchorName(a); got != "service "+k {
			t.Errorf("anchorName(%q) = %q, want %q", a, got, "service "+k)
		}
	}
	if validKey("a--b") || validKey("a/") || validKey("A/b") || validKey("") {
		t.Error("validKey accepts a key whose anchor could collide")
	}
}

func TestStale(t *testing.T) {
	page := "<!-- banner -->\n\n# T\n\n## Services\n\n<a id=\"service-a\"></a>\n\n### a\n\nA.\n\n<a id=\"service-b\"></a>\n\n### b\n\nB.\n\n## Events\n\nNone.\n"
	tests := []struct {
		name string
		old  string
		want []string
	}{
		{"entry changed", strings.Replace(page, "B.", "Bee.", 1), []string{"docs/catalog.md:13: stale: service b differs from the code"}},
		{"entry missing", strings.Replace(page, "<a id=\"service-b\"></a>\n\n### b\n\nB.\n\n", "", 1), []string{"docs/catalog.md:7: stale: service b is missing from the page"}},
		{"entry gone", strings.Replace(page, "## Events", "<a id=\"service-c\"></a>\n\n### c\n\nC.\n\n## Events", 1), []string{"docs/catalog.md:19: stale: service c is on the page but not in the code"}},
		{"header changed", strings.Replace(page, "# T", "# U", 1), []string{"docs/catalog.md:1: stale: header differs from the code"}},
		{"order changed", "<!-- banner -->\n\n# T\n\n## Services\n\n<a id=\"service-b\"></a>\n\n### b\n\nB.\n\n<a id=\"service-a\"></a>\n\n### a\n\nA.\n\n## Events\n\nNone.\n", []string{"docs/catalog.md:7: stale: the page differs from the code"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, f := range Stale("docs/catalog.md", []byte(tt.old), []byte(page)) {
				got = append(got, f.String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Stale:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// BenchmarkBuildWorkspace catalogues this repository: list every package
// of every go.work module, scan every file, parse and type-check the
// packages with directives. Compare with BenchmarkListWorkspace, the go
// list call alone, to see where the time goes.
func BenchmarkBuildWorkspace(b *testing.B) {
	root, err := cli.FindRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		res, err := Build(root)
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Catalog.Services) == 0 {
			b.Fatal("no services catalogued")
		}
	}
}

// BenchmarkListWorkspace is the baseline: the first go list of Build
// alone, which any tool that loads the workspace pays.
func BenchmarkListWorkspace(b *testing.B) {
	root, err := cli.FindRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	_, patterns, err := workPatterns(root)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		cfg := &packages.Config{Mode: modePhase1, Dir: root, Env: goEnv(root)}
		if _, err := packages.Load(cfg, patterns...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender renders the page of this repository's catalogue.
func BenchmarkRender(b *testing.B) {
	root, err := cli.FindRoot(".")
	if err != nil {
		b.Fatal(err)
	}
	res, err := Build(root)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		Render(res.Catalog, DefaultOutput)
	}
}

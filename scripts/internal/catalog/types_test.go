package catalog

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"
)

// TestTypesOf checks which types a signature's Types line lists: the
// exported named types of packages outside the standard library, found
// through pointers, slices, maps, channels, func types and type
// arguments, each once, never the declaration itself.
func TestTypesOf(t *testing.T) {
	const src = `package p

import (
	"context"
	"io"
	"time"
)

type (
	Spec    struct{}
	Result  struct{}
	Req     struct{}
	Key     string
	Val     int
	Ev      struct{}
	In      struct{}
	Out     struct{}
	Arg     struct{}
	G[T any] struct{}
	A       = Spec
	hidden  struct{}
	Self    func(Self, Spec) Self
)

var (
	basic   func(ctx context.Context, s Spec, d time.Duration) (Result, error)
	nested  func(*Spec, []Req, map[Key]Val, <-chan Ev, func(In) Out, [2]*Out)
	generic func(G[Arg], G[G[Spec]]) G[time.Duration]
	alias   func(A) io.Reader
	unexp   func(hidden, *hidden) Spec
	twice   func(Spec, *Spec, []Spec) (Spec, error)
	literal func(struct{ X Req }, interface{ M(In) Out }) any
	none    func(int, string, error) bool
)
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	pkg, err := conf.Check("example.com/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sigOf := func(name string) *types.Signature {
		return pkg.Scope().Lookup(name).Type().Underlying().(*types.Signature)
	}
	self := pkg.Scope().Lookup("Self").(*types.TypeName)
	for _, tc := range []struct {
		name string
		self *types.TypeName
		want string
	}{
		{"basic", nil, "Result Spec"},
		{"nested", nil, "Ev In Key Out Req Spec Val"},
		{"generic", nil, "Arg G Spec"},
		{"alias", nil, "A"},
		{"unexp", nil, "Spec"},
		{"twice", nil, "Spec"},
		{"literal", nil, "In Out Req"},
		{"none", nil, ""},
		{"Self", self, "Spec"},
	} {
		var got []string
		for _, r := range typesOf(tc.self, sigOf(tc.name), qualifier(pkg)) {
			if r.Path != "example.com/p" || r.Display != r.Name {
				t.Errorf("%s: %+v: want path example.com/p and an unqualified name", tc.name, r)
			}
			got = append(got, r.Display)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: types %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestIsStd(t *testing.T) {
	for path, want := range map[string]bool{
		"context": true, "net/http": true, "time": true,
		"github.com/dsh-go/dsh/bash": false, "golang.org/x/crypto/ssh": false, "example.com/fix": false,
	} {
		if got := isStd(path); got != want {
			t.Errorf("isStd(%q) = %v, want %v", path, got, want)
		}
	}
}

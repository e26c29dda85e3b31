package catalog

import (
	"go/types"
	"slices"
	"strings"
)

// TypeRef is a named type that a catalogued signature takes or returns.
type TypeRef struct {
	Path    string // import path of the declaring package
	Name    string // the type's name, e.g. "Spec"
	Display string // as the signature writes it: "Spec", or "bash.Spec" from another package
}

// typeSet collects the TypeRefs of the signatures of one service or event.
type typeSet struct {
	self *types.TypeName // the declaration itself, never listed
	qual types.Qualifier
	refs []TypeRef
}

// addSignature adds the types that the parameters and results of sig
// mention. Only exported types of packages outside the standard library
// count: context.Context, error or time.Duration are the reader's already,
// and the Types line is for the workspace's own vocabulary. A named type
// counts as written; its underlying type is not opened, but the type
// arguments of a generic one are.
func (s *typeSet) addSignature(sig *types.Signature) {
	s.addTuple(sig.Params())
	s.addTuple(sig.Results())
}

func (s *typeSet) addTuple(t *types.Tuple) {
	for v := range t.Variables() {
		s.add(v.Type())
	}
}

func (s *typeSet) add(t types.Type) {
	switch t := t.(type) {
	case *types.Named:
		s.addName(t.Obj())
		for a := range t.TypeArgs().Types() {
			s.add(a)
		}
	case *types.Alias:
		s.addName(t.Obj())
		for a := range t.TypeArgs().Types() {
			s.add(a)
		}
	case *types.Pointer:
		s.add(t.Elem())
	case *types.Slice:
		s.add(t.Elem())
	case *types.Array:
		s.add(t.Elem())
	case *types.Chan:
		s.add(t.Elem())
	case *types.Map:
		s.add(t.Key())
		s.add(t.Elem())
	case *types.Signature:
		s.addSignature(t)
	case *types.Struct:
		for f := range t.Fields() {
			s.add(f.Type())
		}
	case *types.Interface:
		for m := range t.ExplicitMethods() {
			s.add(m.Type())
		}
		for e := range t.EmbeddedTypes() {
			s.add(e)
		}
	}
}

func (s *typeSet) addName(obj *types.TypeName) {
	pkg := obj.Pkg()
	if obj == s.self || pkg == nil || !obj.Exported() || isStd(pkg.Path()) {
		return
	}
	ref := TypeRef{Path: pkg.Path(), Name: obj.Name(), Display: obj.Name()}
	if q := s.qual(pkg); q != "" {
		ref.Display = q + "." + obj.Name()
	}
	if !slices.Contains(s.refs, ref) {
		s.refs = append(s.refs, ref)
	}
}

// typesOf returns the types sig takes and returns, leaving out self, as
// written with qual.
func typesOf(self *types.TypeName, sig *types.Signature, qual types.Qualifier) []TypeRef {
	s := &typeSet{self: self, qual: qual}
	s.addSignature(sig)
	return s.sorted()
}

// sorted returns the collected types sorted by how they are written.
func (s *typeSet) sorted() []TypeRef {
	slices.SortFunc(s.refs, func(a, b TypeRef) int {
		if c := strings.Compare(a.Display, b.Display); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	return s.refs
}

// isStd reports whether path is a standard library import path: its first
// element has no dot, as go/build and goimports decide.
func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

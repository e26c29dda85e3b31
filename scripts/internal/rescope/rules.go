// Package rescope renames vendored forks from their upstream module paths
// to the paths this repository publishes them under (or back). The mapping
// is the fork manifest in vendor/README.md (package manifest); the sites
// are the module paths in go.mod and go.work (through
// golang.org/x/mod/modfile), the quoted import paths and strings of Go
// files (then gofmt'd), the code blocks of every Markdown file, and the
// prose of Markdown files under docs/. A [Plan] holds every edit and every
// problem before anything is written; [Apply] writes a plan only when it
// has no problems. Main is the rescope-vendor command.
package rescope

import (
	"cmp"
	"slices"

	"github.com/dsh-go/dsh/scripts/internal/manifest"
)

// Rule renames the module path From, and every package path under it, to
// To.
type Rule struct {
	From, To string
	Line     int // the manifest row it comes from
}

// Rules is a mapping, longest From first, so a nested module ("x/sub")
// wins over the module that contains its directory ("x").
type Rules []Rule

// NewRules returns the mapping of the manifest m: upstream to scoped, or
// scoped to upstream when reverse is set.
func NewRules(m *manifest.Manifest, reverse bool) Rules {
	var rs Rules
	for _, fk := range m.Forks {
		r := Rule{From: fk.Upstream, To: fk.Module, Line: fk.Line}
		if reverse {
			r.From, r.To = r.To, r.From
		}
		rs = append(rs, r)
	}
	slices.SortStableFunc(rs, func(a, b Rule) int {
		return cmp.Or(cmp.Compare(len(b.From), len(a.From)), cmp.Compare(a.From, b.From))
	})
	return rs
}

// Map returns p renamed by the first (longest) rule whose From is p or a
// path prefix of p, and that rule. ok is false when no rule applies.
func (rs Rules) Map(p string) (mapped string, r Rule, ok bool) {
	for _, r := range rs {
		if manifest.Under(p, r.From) {
			return r.To + p[len(r.From):], r, true
		}
	}
	return p, Rule{}, false
}

// Targets reports whether p is, or lies under, the To path of some rule.
func (rs Rules) Targets(p string) bool {
	for _, r := range rs {
		if manifest.Under(p, r.To) {
			return true
		}
	}
	return false
}

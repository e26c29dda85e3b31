package links

import (
	"path"
	"slices"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
)

// maxCandidates bounds the work spent on one suggestion: a target with
// more anchors than this is only searched this far.
const maxCandidates = 10000

// limit is the largest edit distance at which a candidate is suggested
// for a wanted string of n runes.
func limit(n int) int { return max(1, n/3) }

// nearer reports whether candidate c is close enough to want to suggest
// and closer than the best distance so far (bestD < 0: none yet), and
// returns its distance. n is the length in runes of the part of want that
// matters (a file name's stem): the distance may be at most limit(n) and
// must stay below n, so a candidate sharing nothing with want never
// qualifies. Candidates whose length alone rules them out are not measured.
func nearer(want string, n int, c string, bestD int) (int, bool) {
	lim := limit(n)
	if diff := len([]rune(c)) - len([]rune(want)); diff > lim || -diff > lim {
		return 0, false
	}
	d := distance(want, c)
	return d, d <= lim && d < n && (bestD < 0 || d < bestD)
}

// nearestAnchor returns the anchor in anchors closest to the fragment frag,
// or "" when none is close. The fragment is compared as written, lower-cased
// and slugged, so "#Default-Loop" and "#Default Loop" both find
// "default-loop". Ties go to the anchor that comes first in the document.
func nearestAnchor(frag string, anchors []string) string {
	variants := []string{frag, strings.ToLower(frag), markdown.Slug(frag)}
	best, bestD := "", -1
	if len(anchors) > maxCandidates {
		anchors = anchors[:maxCandidates]
	}
	for _, a := range anchors {
		for _, v := range variants {
			if d, ok := nearer(v, len([]rune(v)), a, bestD); ok {
				best, bestD = a, d
			}
		}
	}
	return best
}

// suggestFile returns the root-relative path of an existing file close to
// the missing target, or "". It first looks for a near name where the path
// stopped resolving, then for the one source file elsewhere with the same
// name (a moved file).
func (c *checker) suggestFile(target string, r resolved) string {
	if r.missing != "" {
		names := c.tree.names(r.parent)
		slices.Sort(names)
		best, bestD := "", -1
		want := strings.ToLower(r.missing)
		stem := len([]rune(strings.TrimSuffix(want, path.Ext(want))))
		for _, n := range names {
			if d, ok := nearer(want, stem, strings.ToLower(n), bestD); ok {
				best, bestD = n, d
			}
		}
		if best != "" {
			rest := strings.TrimPrefix(target, join(r.parent, r.missing))
			cand := join(r.parent, best) + rest
			if cr := c.tree.resolve(cand); cr.exists && !cr.caseDiffers {
				return cand
			}
		}
	}
	// A moved file: suggest it only when its name is unique among the
	// sources, or every README.md would point at every other one.
	base := path.Base(target)
	found := ""
	for _, k := range c.known {
		if path.Base(k) != base {
			continue
		}
		if found != "" {
			return ""
		}
		found = k
	}
	return found
}

// distance is the Levenshtein distance between a and b in runes.
func distance(a, b string) int {
	if a == b {
		return 0
	}
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

package bashpolicy

import (
	"fmt"
	"os"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/dsh-go/dsh/tools"
)

// write is a redirection that writes to target, written as subject in code run by via.
type write struct {
	target  string
	subject string
	via     string
}

// writeOps are the redirections that open a file for writing.
var writeOps = map[syntax.RedirOperator]bool{
	syntax.RdrOut: true, syntax.AppOut: true, syntax.RdrInOut: true, syntax.RdrClob: true, syntax.AppClob: true,
	syntax.RdrAll: true, syntax.RdrAllClob: true, syntax.AppAll: true, syntax.AppAllClob: true,
}

// harmlessTargets are the files every command may write to.
var harmlessTargets = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true}

// redirect records the redirection r of frame f when it writes to a file; a target the policy
// cannot read is unknown.
func (j *judge) redirect(f frame, r *syntax.Redirect) {
	if r.Op == syntax.RdrIn || r.Op == syntax.DplOut || writeOps[r.Op] {
		if j.network(f, r) {
			return
		}
	}
	if r.Op == syntax.DplOut { // >&N duplicates a descriptor; >&word writes to a file
		if w := resolve(f.src, r.Word); w.lit && (w.text == "-" || strings.Trim(strings.TrimSuffix(w.text, "-"), "0123456789") == "") {
			return
		}
	} else if !writeOps[r.Op] {
		return
	}
	subject := sourceOf(f.src, r)
	w := resolve(f.src, r.Word)
	if !w.lit {
		j.unknown(f, subject, "writes to a path the policy cannot read (%s)", w.src)
		return
	}
	j.writes = append(j.writes, write{target: w.text, subject: subject, via: f.via})
}

// maxDirs bounds the directories the policy follows a shell through.
const maxDirs = 16

// dirs returns the directories the shell may be in once the command has run: where it started
// and every place its cd and pushd may have taken it, relative ones applied to every directory
// it may be in. A target with ".." is applied until nothing new comes (a loop of cd .. climbs as
// far as it likes); one without only descends, so a second application is as far as it is
// followed (a deeper directory reached by repeating it makes no relative path climb further). It
// returns true instead when the policy cannot tell (a cd it could not read, too many places).
func (j *judge) dirs() ([]string, bool) {
	if j.where.Lost || j.lost {
		return nil, true
	}
	set := append([]string(nil), j.where.Dirs...)
	if len(set) == 0 {
		if j.where.Workspace == "" {
			return nil, true
		}
		set = []string{j.where.Workspace}
	}
	rounds := min(len(j.cds), 2)
	for _, t := range j.cds {
		if t == ".." || strings.HasPrefix(t, "../") || strings.Contains(t, "/../") || strings.HasSuffix(t, "/..") {
			rounds = maxDirs
		}
	}
	for range rounds {
		added := false
		from := append([]string(nil), set...) // one round: every cd applied once
		for _, t := range j.cds {
			for _, d := range from {
				next := t
				if !path.IsAbs(t) {
					next = path.Join(d, t) // cd resolves .. by name, as bash's cd -L does
				}
				if !containsString(set, next) {
					set = append(set, next)
					added = true
				}
				if len(set) > maxDirs {
					return nil, true
				}
			}
		}
		if !added {
			break
		}
	}
	return set, false
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkWrites judges every recorded redirection against the workspace, from every directory the
// shell may be in: a write outside the workspace is asked.
func (j *judge) checkWrites() {
	if len(j.writes) == 0 {
		return
	}
	dirs, lost := j.dirs()
	ws, root := j.where.Workspace, j.where.root
	if root == "" && ws != "" {
		root = realPath(ws)
	}
	inside := map[string]string{} // path written → "" when inside, else the real path outside
	for _, w := range j.writes {
		if harmlessTargets[w.target] || w.target == "" {
			continue
		}
		f := frame{via: w.via}
		bases := dirs
		switch {
		case path.IsAbs(w.target):
			bases = []string{""}
		case lost:
			j.unknown(f, w.subject, "writes to the relative path %s, but the policy cannot tell which directory the shell is in (after a cd it could not follow); use an absolute path", w.target)
			continue
		}
		for _, b := range bases {
			p := b + "/" + w.target
			if b == "" {
				p = w.target
			}
			out, ok := inside[p]
			if !ok {
				out = outside(ws, root, p)
				inside[p] = out
			}
			if out != "" {
				where := "outside the workspace " + ws
				if root == "" {
					where = "and the policy knows no workspace"
				}
				j.add(f, tools.VerdictAsk, w.subject, "", fmt.Sprintf("writes to %s, %s", out, where), false)
				break
			}
		}
	}
}

// outside returns "" when a write to the absolute path p reaches a file inside the workspace ws
// (whose real path is root), and otherwise the path it reaches. Symbolic links are followed, so
// a link in the workspace that points out of it is outside; a path that is not under the
// workspace even by name is outside without a look at the file system.
func outside(ws, root, p string) string {
	clean := path.Clean(p)
	if root == "" {
		return clean
	}
	if !strings.Contains(p, "/..") && !under(clean, ws) && !under(clean, root) {
		return clean
	}
	var real string
	if under(clean, ws) && !strings.Contains(p, "/..") {
		real = realPathFrom(root, strings.TrimPrefix(clean, ws)) // the workspace's own components are known
	} else {
		real = realPath(p)
	}
	if under(real, root) {
		return ""
	}
	return real
}

// under reports whether the clean path x is dir or lies below it.
func under(x, dir string) bool {
	if dir == "/" {
		return strings.HasPrefix(x, "/")
	}
	return strings.HasPrefix(x, dir) && (len(x) == len(dir) || x[len(dir)] == '/')
}

// maxLinks bounds the symbolic links realPath follows, as the kernel does (ELOOP).
const maxLinks = 40

// realPath returns the absolute path p with every symbolic link of its existing part resolved
// and the rest cleaned, the file a write to p would reach. Components after one that does not
// exist are taken by name.
func realPath(p string) string { return realPathFrom("/", p) }

// realPathFrom returns realPath(dir + "/" + rel) for a directory dir that is already a real
// path (no symbolic link in it): only the components of rel are looked up.
func realPathFrom(dir, rel string) string {
	cur, links := dir, 0
	rest := strings.Split(rel, "/")
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		fi, err := os.Lstat(next)
		if err != nil {
			return path.Join(append([]string{next}, rest...)...)
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if links++; err != nil || links > maxLinks {
			return path.Join(append([]string{next}, rest...)...)
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return cur
}

// network judges the redirection r, which opens its target, when the target may be one of
// bash's network paths (/dev/tcp/HOST/PORT, /dev/udp/HOST/PORT), which connect whatever the
// direction (< as much as >, and any descriptor duplicated from it afterwards): a literal one is
// asked, one the policy cannot read is unknown unless its literal start rules them out. It
// reports whether it recorded a finding.
func (j *judge) network(f frame, r *syntax.Redirect) bool {
	subject := sourceOf(f.src, r)
	w := resolve(f.src, r.Word)
	if w.lit {
		if isNetPath(w.text) {
			j.add(f, tools.VerdictAsk, subject, "", fmt.Sprintf("opens a network connection (%s)", w.text), false)
			return true
		}
		return false
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return false // a /dev/fd path
		}
	}
	prefix := literalPrefix(r.Word)
	for _, np := range []string{"/dev/tcp/", "/dev/udp/"} {
		if strings.HasPrefix(np, prefix) || strings.HasPrefix(prefix, np) {
			j.unknown(f, subject, "opens a path the policy cannot read (%s), which may be a network connection (/dev/tcp, /dev/udp)", w.src)
			return true
		}
	}
	return false
}

// isNetPath reports whether bash opens p as a network connection.
func isNetPath(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/")
}

// literalPrefix returns the text of the literal parts at the start of w, up to its first
// expansion.
func literalPrefix(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\*?[~") {
				return b.String()
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return b.String()
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, in := range p.Parts {
				l, ok := in.(*syntax.Lit)
				if !ok || strings.ContainsRune(l.Value, '\\') {
					return b.String()
				}
				b.WriteString(l.Value)
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

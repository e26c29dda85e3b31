// Package corpus writes a synthetic documentation tree for benchmarking
// and cross-checking the link checker: nested folders in two languages
// (English and Chinese), headings whose GitHub slugs need the full rules,
// and many relative links with fragments between pages. With faults, it
// plants broken links at known places and says where.
package corpus

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/dsh-go/dsh/scripts/internal/markdown"
)

// Options shape the corpus.
type Options struct {
	Files        int    // number of Markdown files; half per language
	Seed         uint64 // the same seed writes the same bytes
	LinksPerFile int    // relative links per file, most with a fragment
	Sections     int    // "##" sections per file
	ParaWords    int    // words per paragraph
	Faults       int    // broken links to plant: half missing files, half missing anchors
}

// Default is the shape of the benchmark corpus: about 2,000 files, 13 MB
// and 14,000 relative links with fragments.
var Default = Options{Files: 2000, Seed: 1, LinksPerFile: 7, Sections: 8, ParaWords: 38}

// Fault is one planted broken link.
type Fault struct {
	Path string // root-relative file
	Line int    // 1-based line of the link
	Dest string // the destination as written
}

// Stats describes a written corpus.
type Stats struct {
	Files, Bytes, Links int
	Faults              []Fault
}

type page struct {
	rel      string
	lang     string
	title    string
	sections []string // heading texts
	slugs    []string
}

var enWords = strings.Fields("agent shell output tail head spill process group signal timeout buffer record gate link anchor heading module workspace catalog notice vendor fork release build test check index page section value option server client stream token budget")
var zhWords = strings.Fields("代理 外壳 输出 尾部 头部 进程 信号 超时 缓冲 记录 门禁 链接 锚点 标题 模块 工作区 目录 通知 分支 发布 构建 测试 检查 页面 章节 选项 服务器 客户端")

// Generate writes the corpus described by opt under dir, which must exist,
// and returns what it wrote.
func Generate(dir string, opt Options) (Stats, error) {
	r := rand.New(rand.NewPCG(opt.Seed, 0x5eed))
	pages := make([]*page, opt.Files)
	for i := range pages {
		lang := "en"
		words := enWords
		if i%2 == 1 {
			lang, words = "zh", zhWords
		}
		depth := 1 + i%3
		parts := []string{lang}
		for d := 0; d < depth; d++ {
			parts = append(parts, fmt.Sprintf("%s-%02d", []string{"guide", "topic", "part"}[d], (i/(d+2))%12))
		}
		rel := path.Join(append(parts, fmt.Sprintf("page-%04d.md", i))...)
		p := &page{rel: rel, lang: lang, title: fmt.Sprintf("%s %d", pick(r, words), i)}
		var s markdown.Slugger
		s.Slug(p.title)
		for k := 0; k < opt.Sections; k++ {
			h := heading(r, words, k)
			p.sections = append(p.sections, h)
			p.slugs = append(p.slugs, s.Slug(headingText(h)))
		}
		pages[i] = p
	}

	faultAt := map[int]bool{} // link index across the corpus -> planted
	total := opt.Files * opt.LinksPerFile
	for len(faultAt) < min(opt.Faults, total) {
		faultAt[r.IntN(total)] = true
	}

	var st Stats
	linkIdx := 0
	for _, p := range pages {
		var b strings.Builder
		line := 1
		write := func(s string) {
			b.WriteString(s)
			line += strings.Count(s, "\n")
		}
		write("# " + p.title + "\n\n")
		words := enWords
		if p.lang == "zh" {
			words = zhWords
		}
		perSection := make([]int, opt.Sections)
		for k := 0; k < opt.LinksPerFile; k++ {
			perSection[k%opt.Sections]++
		}
		for k, h := range p.sections {
			write("## " + h + "\n\n")
			for para := 0; para < 3; para++ {
				var ws []string
				for w := 0; w < opt.ParaWords; w++ {
					ws = append(ws, pick(r, words))
				}
				if para == 1 {
					for n := 0; n < perSection[k]; n++ {
						dest := linkTo(r, p, pages)
						if faultAt[linkIdx] {
							if len(st.Faults)%2 == 0 {
								dest = strings.Replace(dest, ".md", "-missing.md", 1)
								if !strings.Contains(dest, "-missing.md") { // a same-file fragment
									dest = "gone-missing.md" + dest
								}
							} else if i := strings.IndexByte(dest, '#'); i >= 0 {
								dest = dest[:i] + "#no-such-anchor"
							} else {
								dest += "#no-such-anchor"
							}
							st.Faults = append(st.Faults, Fault{Path: p.rel, Line: line, Dest: dest})
						}
						linkIdx++
						st.Links++
						at := (n + 1) * len(ws) / (perSection[k] + 1)
						ws[at] = fmt.Sprintf("[%s](%s)", ws[at], dest)
					}
				}
				sep := " "
				if p.lang == "zh" {
					sep = ""
				}
				write(strings.Join(ws, sep) + "\n\n")
			}
		}
		name := filepath.Join(dir, filepath.FromSlash(p.rel))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return st, err
		}
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			return st, err
		}
		st.Files++
		st.Bytes += b.Len()
	}
	return st, nil
}

// linkTo returns a relative destination from p to a random section of a
// random page (sometimes p itself, as a bare fragment; sometimes the page
// without a fragment).
func linkTo(r *rand.Rand, p *page, pages []*page) string {
	t := pages[r.IntN(len(pages))]
	frag := "#" + t.slugs[r.IntN(len(t.slugs))]
	if t == p {
		return frag
	}
	rel := relPath(path.Dir(p.rel), t.rel)
	if r.IntN(10) == 0 {
		return rel
	}
	return rel + frag
}

func heading(r *rand.Rand, words []string, k int) string {
	switch k % 4 {
	case 0:
		return fmt.Sprintf("%s %s", pick(r, words), pick(r, words))
	case 1:
		return fmt.Sprintf("Step %d: the `%s` %s", k, pick(r, words), pick(r, words))
	case 2:
		return fmt.Sprintf("%s — %s and %s", pick(r, words), pick(r, words), pick(r, words))
	}
	return fmt.Sprintf("%s %s", pick(r, words), pick(r, words)) // repeats get -1, -2
}

// headingText is the rendered text of the heading "## h".
func headingText(h string) string {
	f := markdown.Parse("h.md", []byte("## "+h+"\n"))
	return markdown.HeadingText(f.Doc.FirstChild(), f.Src)
}

func pick(r *rand.Rand, words []string) string { return words[r.IntN(len(words))] }

func relPath(from, to string) string {
	f, t := strings.Split(from, "/"), strings.Split(to, "/")
	i := 0
	for i < len(f) && i < len(t)-1 && f[i] == t[i] {
		i++
	}
	var parts []string
	for range f[i:] {
		parts = append(parts, "..")
	}
	return strings.Join(append(parts, t[i:]...), "/")
}

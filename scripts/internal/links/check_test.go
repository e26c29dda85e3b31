package links

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeTree writes files (slash path -> content) under a new directory and
// returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		full := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestCheckClasses runs Check on small trees, one case per class of the
// GitHub rules (each example and its neighbours): want lists the messages
// of the findings on a.md, in order.
func TestCheckClasses(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		// Fragments are whole.
		{"? in a same-file fragment is part of it", map[string]string{"a.md": "# Query params\n\n[x](#query-params?)\n"},
			[]string{`broken link "#query-params?": no anchor "#query-params?" in a.md; did you mean "#query-params"?`}},
		{"? in a cross-file fragment is part of it", map[string]string{"a.md": "[x](other.md#this?y)\n", "other.md": "# This\n"},
			[]string{`broken link "other.md#this?y": no anchor "#this?y" in other.md; did you mean "other.md#this"?`}},
		{"an anchor with ? matches", map[string]string{"a.md": "# Why?\n\n<a id=\"q?\"></a>\n\n[x](#q?) [y](#why)\n"}, nil},
		{"a query before the fragment is not part of it", map[string]string{"a.md": "[x](b.md?plain=1#b)\n", "b.md": "# B\n"}, nil},
		{"#top is the top of the page", map[string]string{"a.md": "[x](#top) [y](b.md#top) [z](#TOP)\n", "b.md": "text\n"}, nil},
		{"#top- is not #top", map[string]string{"a.md": "[x](#top-)\n"}, []string{`broken link "#top-": no anchor "#top-" in a.md`}},
		{"an empty fragment is still reported", map[string]string{"a.md": "[x](#)\n"}, []string{`broken link "#": empty fragment`}},
		// Only links that render as links.
		{"a link in an image description is alt text", map[string]string{"a.md": "![[x](inner.md)](outer.png)\n", "outer.png": ""}, nil},
		{"the image itself is still checked", map[string]string{"a.md": "![[x](inner.md)](outer.png)\n"}, []string{`broken image "outer.png": target does not exist`}},
		{"html href keeps a backslash", map[string]string{"a.md": "<a href=\"e\\*f.md\">x</a>\n", `e\*f.md`: ""}, nil},
		{"html href with a backslash is not the unescaped name", map[string]string{"a.md": "<a href=\"e\\*f.md\">x</a>\n", "e*f.md": ""},
			[]string{`broken link "e\\*f.md": target does not exist; did you mean "e*f.md"?`}},
		{"markdown link drops the backslash", map[string]string{"a.md": "[x](e\\*f.md)\n", "e*f.md": ""}, nil},
		{"html entities are decoded once", map[string]string{"a.md": "<a href=\"a&amp;amp;b.md\">x</a>\n", "a&amp;b.md": ""}, nil},
		// Fragments into any Markdown file and into folders.
		{"fragment into .markdown", map[string]string{"a.md": "[x](doc.markdown#missing) [y](doc.markdown#doc)\n", "doc.markdown": "# Doc\n"},
			[]string{`broken link "doc.markdown#missing": no anchor "#missing" in doc.markdown`}},
		{"fragment into .mdown and upper-case .MD", map[string]string{"a.md": "[x](d.mdown#no) [y](e.MD#no)\n", "d.mdown": "# D\n", "e.MD": "# E\n"},
			[]string{`broken link "d.mdown#no": no anchor "#no" in d.mdown`, `broken link "e.MD#no": no anchor "#no" in e.MD`}},
		{"fragment into a text file is not checked", map[string]string{"a.md": "[x](notes.txt#L3)\n", "notes.txt": "x\n"}, nil},
		{"fragment into a folder checks its README", map[string]string{"a.md": "[x](folder#missing) [y](folder/#intro) [z](folder#folder)\n", "folder/README.md": "# Folder\n## Intro\n"},
			[]string{`broken link "folder#missing": no anchor "#missing" in folder/README.md`}},
		{"a folder README of any case and Markdown extension", map[string]string{"a.md": "[x](f#one) [y](f#two)\n", "f/readme.markdown": "# One\n"},
			[]string{`broken link "f#two": no anchor "#two" in f/readme.markdown`}},
		{"a folder without a README has no anchors", map[string]string{"a.md": "[x](empty#x)\n", "empty/other.md": "# X\n"},
			[]string{`broken link "empty#x": no anchor "#x": the folder empty has no README to hold it`}},
		{"a folder README in other markup is not checked", map[string]string{"a.md": "[x](r#x)\n", "r/README.rst": "X\n=\n"}, nil},
		{"the root's README, from .github first", map[string]string{"a.md": "[x](.#gh) [y](/#root)\n", ".github/README.md": "# GH\n", "README.md": "# Root\n"},
			[]string{`broken link "/#root": no anchor "#root" in .github/README.md`}},
		{"a folder without a fragment is fine", map[string]string{"a.md": "[x](empty)\n", "empty/x.txt": ""}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := writeTree(t, tt.files)
			res := Check(root, []string{"a.md"})
			if len(res.Errors) > 0 {
				t.Fatalf("errors: %v", res.Errors)
			}
			var got []string
			for _, f := range res.Findings {
				if f.Path != "a.md" {
					t.Errorf("finding on %s: %s", f.Path, f.Message)
				}
				got = append(got, f.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("findings\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

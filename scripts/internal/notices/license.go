package notices

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/licensecheck"
)

// Allowed is the permissive allow-list: a shipped module or a fork whose
// detected licenses are not all on it is an error unless an override with
// a written reason names it.
var Allowed = []string{"0BSD", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "BlueOak-1.0.0", "CC0-1.0", "ISC", "MIT", "Unlicense"}

// MinCoverage is the share of a license file (in percent of its words)
// that licensecheck must recognise for the file to count as detected.
// Below it the file holds text nobody has classified (an extra clause
// after a permissive license, say), which needs a person and an override.
// Plain license files with a title and a copyright line score 97 to 100.
const MinCoverage = 90

// maxLicenseSize is the largest license or notice file read.
const maxLicenseSize = 1 << 20

var (
	// licenseName matches license files at a module's root: LICENSE,
	// LICENCE, UNLICENSE or COPYING, alone or with a suffix such as
	// "-MIT", ".md" or ".txt".
	licenseName = regexp.MustCompile(`^(?i)(?:(?:un)?licen[cs]e|copying)(?:[-._].*)?$`)
	// noticeName matches the NOTICE files that Apache-2.0 asks to
	// reproduce; they are copied, not classified.
	noticeName = regexp.MustCompile(`^(?i)notice(?:[-._].*)?$`)
)

// TextFile is a license or notice file of a module.
type TextFile struct {
	Name    string   // file name at the module root
	Text    []byte   // contents, line endings normalised to "\n", ending in one "\n"
	IDs     []string // licenses detected in it (license files only), sorted
	Percent float64  // share recognised, in percent (license files only)
	Notice  bool     // a NOTICE file
}

// Detection is what the license files at a module's root say.
type Detection struct {
	Files   []TextFile // license files, then notice files, each sorted by name
	IDs     []string   // every license detected, sorted, unique
	Problem string     // why detection failed; empty when every license file was recognised
}

// Detect reads the license and notice files at the root of the module
// directory dir and classifies each license file with licensecheck. A
// module with no license file, or with one that licensecheck recognises
// below [MinCoverage], gets a Problem. It errors only when dir or a file
// cannot be read.
func Detect(dir string) (*Detection, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	d := &Detection{}
	var notices []TextFile
	var problems []string
	for _, e := range entries {
		name := e.Name()
		isLicense := licenseName.MatchString(name) && !strings.HasSuffix(strings.ToLower(name), ".go")
		isNotice := noticeName.MatchString(name) && !strings.HasSuffix(strings.ToLower(name), ".go")
		if !isLicense && !isNotice {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			continue
		}
		if st.Size() > maxLicenseSize {
			return nil, fmt.Errorf("%s: over the %d-byte limit for a license file", filepath.Join(dir, name), maxLicenseSize)
		}
		text, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		tf := TextFile{Name: name, Text: normalize(text), Notice: isNotice}
		if isLicense {
			cov := licensecheck.Scan(text)
			tf.Percent = cov.Percent
			for _, m := range cov.Match {
				tf.IDs = append(tf.IDs, m.ID)
			}
			slices.Sort(tf.IDs)
			tf.IDs = slices.Compact(tf.IDs)
			switch {
			case len(tf.IDs) == 0:
				problems = append(problems, fmt.Sprintf("%s: no known license recognised", name))
			case cov.Percent < MinCoverage:
				problems = append(problems, fmt.Sprintf("%s: only %.0f%% recognised (as %s); the rest is unclassified text", name, cov.Percent, strings.Join(tf.IDs, ", ")))
			default:
				d.IDs = append(d.IDs, tf.IDs...)
			}
			d.Files = append(d.Files, tf)
		} else {
			notices = append(notices, tf)
		}
	}
	d.Files = append(d.Files, notices...)
	if !slices.ContainsFunc(d.Files, func(f TextFile) bool { return !f.Notice }) {
		problems = append(problems, "no license file (LICENSE, LICENCE, COPYING or UNLICENSE) at the module root")
	}
	slices.Sort(d.IDs)
	d.IDs = slices.Compact(d.IDs)
	d.Problem = strings.Join(problems, "; ")
	return d, nil
}

// normalize turns CRLF and CR line endings into LF and ends the text with
// exactly one newline, so the notices do not depend on how a file was
// checked out.
func normalize(text []byte) []byte {
	text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	text = bytes.ReplaceAll(text, []byte("\r"), []byte("\n"))
	text = bytes.TrimRight(text, "\n")
	return append(text, '\n')
}

// NotAllowed returns the licenses of ids that are not on [Allowed].
func NotAllowed(ids []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(Allowed, id) {
			out = append(out, id)
		}
	}
	return out
}

// isNotExist reports whether err says a file or directory does not exist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

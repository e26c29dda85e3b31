package main

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// minTokenLen is the shortest bearer token dsh accepts in a token file.
const minTokenLen = 32

// tokenSet is the bearer tokens of a token file, kept only as SHA-256 digests, with the
// principal each one names. It is read-only once built, so safe for concurrent use.
type tokenSet struct {
	digests    [][sha256.Size]byte
	principals []string
}

// defaultTokenFile returns where dsh mcp -http reads its tokens by default:
// $XDG_CONFIG_HOME/dsh/tokens, or the platform's user configuration directory.
func defaultTokenFile() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("token file: no user configuration directory (%v); give -token-file", err)
	}
	return filepath.Join(dir, "dsh", "tokens"), nil
}

// loadTokens reads the token file path, creating it with one fresh token, printed to stderr,
// when it does not exist. The file holds one token per line, optionally "NAME TOKEN"; NAME is
// the principal that owns the sessions the token opens (an unnamed token is "token-N", N its
// position among the tokens). Blank lines and lines starting with # are skipped. It refuses a
// file that is not a regular file, that others can read or write (its mode must be 0600 or
// stricter), that another user owns, that holds no token, a token shorter than minTokenLen
// bytes, or the same token or name twice.
func loadTokens(path string, stderr io.Writer) (*tokenSet, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := createTokenFile(path, stderr); err != nil {
			return nil, err
		}
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("token file %s: not a regular file", path)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("token file %s: mode %#o lets other users read or write it; chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return nil, fmt.Errorf("token file %s: owned by uid %d, not by this user (uid %d)", path, st.Uid, os.Getuid())
	}
	return parseTokens(path, io.LimitReader(f, 1<<20))
}

// parseTokens reads the tokens of the file named path from r (see loadTokens).
func parseTokens(path string, r io.Reader) (*tokenSet, error) {
	ts := &tokenSet{}
	seenName := map[string]bool{}
	seenToken := map[[sha256.Size]byte]bool{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		var name, token string
		switch len(fields) {
		case 1:
			name, token = "token-"+strconv.Itoa(len(ts.digests)+1), fields[0]
		case 2:
			name, token = fields[0], fields[1]
		default:
			return nil, fmt.Errorf("token file %s: line %d: want TOKEN or NAME TOKEN, got %d fields", path, n, len(fields))
		}
		if len(token) < minTokenLen {
			return nil, fmt.Errorf("token file %s: line %d: the token is %d bytes; it must be at least %d", path, n, len(token), minTokenLen)
		}
		d := sha256.Sum256([]byte(token))
		if seenToken[d] {
			return nil, fmt.Errorf("token file %s: line %d: the same token twice", path, n)
		}
		if seenName[name] {
			return nil, fmt.Errorf("token file %s: line %d: the name %q twice", path, n, name)
		}
		seenToken[d], seenName[name] = true, true
		ts.digests = append(ts.digests, d)
		ts.principals = append(ts.principals, name)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(ts.digests) == 0 {
		return nil, fmt.Errorf("token file %s: no token", path)
	}
	return ts, nil
}

// createTokenFile creates the token file path (and its directory, mode 0700) holding one new
// token, and prints the token to stderr: the only time it is shown.
func createTokenFile(path string, stderr io.Writer) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	token := newToken()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	_, err = fmt.Fprintf(f, "# dsh mcp -http bearer tokens: one per line, TOKEN or NAME TOKEN\ndefault %s\n", token)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("token file: %w", err)
	}
	fmt.Fprintf(stderr, "dsh mcp: created %s with a new token (principal \"default\"); it is shown only this once:\n%s\n", path, token)
	return nil
}

// newToken returns a fresh random bearer token of 256 bits (52 base32 characters).
func newToken() string { return rand.Text() + rand.Text() }

// principal returns the principal of the bearer token r carries (Authorization: Bearer TOKEN),
// or false when it carries none or an unknown one. The presented token is hashed and compared
// in constant time against every known digest, so the time taken says nothing about which
// token, if any, came close.
func (ts *tokenSet) principal(r *http.Request) (string, bool) {
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(token)))
	match := -1
	for i := range ts.digests {
		if subtle.ConstantTimeCompare(d[:], ts.digests[i][:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return "", false
	}
	return ts.principals[match], true
}

package bashssh

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// hostDB is the content of known_hosts files, matched as OpenSSH matches it: a host on port 22 is
// looked up by its name, any other by "[name]:port", against comma-separated patterns with "*" and
// "?" wildcards, "!" negations and hashed ("|1|salt|hash") names. A @cert-authority key is trusted
// only to sign host certificates and never accepted as a host key; a @revoked key is refused
// wherever it appears, as a host key, as a certified key or as the CA of a certificate.
type hostDB struct {
	files   []string
	keys    []hostLine // plain host keys
	cas     []hostLine // @cert-authority keys
	revoked map[string]knownhosts.KnownKey
}

// hostLine is one known_hosts entry.
type hostLine struct {
	patterns []string
	key      knownhosts.KnownKey
}

// readHostDB reads files. A file that cannot be opened is an error, and so is one whose lines all
// fail to parse; a bad line among good ones is skipped, as OpenSSH does.
func readHostDB(files []string) (*hostDB, error) {
	db := &hostDB{files: files, revoked: map[string]knownhosts.KnownKey{}}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		if err := db.read(data, name); err != nil {
			return nil, err
		}
	}
	return db, nil
}

func (db *hostDB) read(data []byte, name string) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	var firstErr error
	valid, n := 0, 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		marker, hosts, key, _, _, err := ssh.ParseKnownHosts(line)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s:%d: %w", name, n, err)
			}
			continue
		}
		valid++
		known := knownhosts.KnownKey{Key: key, Filename: name, Line: n}
		switch marker {
		case "revoked":
			db.revoked[string(key.Marshal())] = known
		case "cert-authority":
			db.cas = append(db.cas, hostLine{hosts, known})
		case "":
			db.keys = append(db.keys, hostLine{hosts, known})
		default:
			valid--
			if firstErr == nil {
				firstErr = fmt.Errorf("%s:%d: unknown marker @%s", name, n, marker)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if valid == 0 && firstErr != nil {
		return fmt.Errorf("no valid entries: %w", firstErr)
	}
	return nil
}

// hostName returns host and port as known_hosts writes them: "host" on port 22, "[host]:port"
// otherwise.
func hostName(host string, port int) string {
	host = strings.ToLower(host)
	if port == 22 {
		return host
	}
	return "[" + host + "]:" + strconv.Itoa(port)
}

// matchHost reports whether name matches the patterns of one line: one positive pattern matches and
// no negated one does.
func matchHost(patterns []string, name string) bool {
	matched := false
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		var ok bool
		if strings.HasPrefix(p, "|1|") {
			ok = matchHashed(p, name)
		} else {
			// path.Match is the wildcard matcher for "*" and "?"; it treats "[" and "\" specially,
			// which known_hosts patterns such as "[host]:2222" use literally, so those are escaped.
			esc := strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(strings.ToLower(p))
			ok, _ = path.Match(esc, name)
		}
		if ok && neg {
			return false
		}
		matched = matched || ok
	}
	return matched
}

// matchHashed reports whether the hashed name "|1|SALT|HASH" is name.
func matchHashed(p, name string) bool {
	parts := strings.Split(p, "|")
	if len(parts) != 4 {
		return false
	}
	salt, err1 := base64.StdEncoding.DecodeString(parts[2])
	want, err2 := base64.StdEncoding.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	mac := hmac.New(sha1.New, salt)
	mac.Write([]byte(name))
	return hmac.Equal(mac.Sum(nil), want)
}

func (db *hostDB) isRevoked(key ssh.PublicKey) (knownhosts.KnownKey, bool) {
	k, ok := db.revoked[string(key.Marshal())]
	return k, ok
}

// matching returns the lines of list whose patterns match name.
func matching(list []hostLine, name string) []knownhosts.KnownKey {
	var out []knownhosts.KnownKey
	for _, l := range list {
		if matchHost(l.patterns, name) {
			out = append(out, l.key)
		}
	}
	return out
}

// certAlgorithms are the host certificate algorithms asked for first when a @cert-authority line
// matches the host, in OpenSSH's order.
var certAlgorithms = []string{
	ssh.CertAlgoED25519v01, ssh.CertAlgoECDSA256v01, ssh.CertAlgoECDSA384v01, ssh.CertAlgoECDSA521v01,
	ssh.CertAlgoRSASHA512v01, ssh.CertAlgoRSASHA256v01,
}

// plainAlgorithms returns the host key algorithms that present key's type.
func plainAlgorithms(keyType string) []string {
	if keyType == ssh.KeyAlgoRSA {
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{keyType}
}

// algorithms returns the host key algorithms to ask the server for: certificates first when a
// @cert-authority line matches name, then the types of the plain keys known for name (every
// type, when none is known and a CA is), or nil (the client's defaults) when nothing is known.
func (db *hostDB) algorithms(name string) []string {
	var algos []string
	seen := map[string]bool{}
	add := func(names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				algos = append(algos, n)
			}
		}
	}
	cas := matching(db.cas, name)
	if len(cas) > 0 {
		add(certAlgorithms...)
	}
	keys := matching(db.keys, name)
	for _, k := range keys {
		add(plainAlgorithms(k.Key.Type())...)
	}
	if len(cas) > 0 && len(keys) == 0 {
		for _, a := range ssh.SupportedAlgorithms().HostKeys {
			if !strings.Contains(a, "-cert-") {
				add(a)
			}
		}
	}
	return algos
}

// check verifies the key the server at host and port presented: a certificate against the
// @cert-authority lines (host must be one of its principals), a plain key against the plain lines.
// Every refusal is a *HostKeyError.
func (db *hostDB) check(host string, port int, key ssh.PublicKey) error {
	name := hostName(host, port)
	refuse := func(offered ssh.PublicKey) *HostKeyError {
		return &HostKeyError{Host: name, Offered: key, Fingerprint: ssh.FingerprintSHA256(offered), Files: db.files}
	}
	cert, isCert := key.(*ssh.Certificate)
	if !isCert {
		return db.checkPlain(name, key, refuse(key))
	}
	hk := refuse(cert.Key)
	if _, ok := db.isRevoked(cert.Key); ok {
		hk.Revoked = true
		return hk
	}
	if _, ok := db.isRevoked(cert.SignatureKey); ok {
		hk.Revoked = true
		hk.Err = fmt.Errorf("the certificate's CA %s %s is marked @revoked", cert.SignatureKey.Type(), ssh.FingerprintSHA256(cert.SignatureKey))
		return hk
	}
	trusted := false
	for _, ca := range matching(db.cas, name) {
		if bytes.Equal(ca.Key.Marshal(), cert.SignatureKey.Marshal()) {
			trusted = true
		}
	}
	if !trusted {
		// As OpenSSH does, a certificate no CA vouches for is checked as the plain key it
		// certifies.
		if err := db.checkPlain(name, cert.Key, hk); err == nil {
			return nil
		}
		hk.Err = fmt.Errorf("its host certificate is signed by %s %s, which no @cert-authority line of known_hosts (%s) trusts for %s",
			cert.SignatureKey.Type(), ssh.FingerprintSHA256(cert.SignatureKey), strings.Join(db.files, ", "), name)
		return hk
	}
	if cert.CertType != ssh.HostCert {
		hk.Err = errors.New("it presented a user certificate as a host certificate")
		return hk
	}
	var checker ssh.CertChecker
	if err := checker.CheckCert(host, cert); err != nil {
		hk.Err = fmt.Errorf("its host certificate is refused: %w", err)
		return hk
	}
	return nil
}

// checkPlain verifies a plain host key, filling hk when it is refused.
func (db *hostDB) checkPlain(name string, key ssh.PublicKey, hk *HostKeyError) error {
	if _, ok := db.isRevoked(key); ok {
		hk.Revoked = true
		return hk
	}
	known := matching(db.keys, name)
	for _, k := range known {
		if bytes.Equal(k.Key.Marshal(), key.Marshal()) {
			return nil
		}
	}
	for _, ca := range matching(db.cas, name) {
		if bytes.Equal(ca.Key.Marshal(), key.Marshal()) {
			hk.Err = fmt.Errorf("it is the key of a certificate authority (@cert-authority at %s:%d), trusted only to sign host certificates, never as a host key", ca.Filename, ca.Line)
			return hk
		}
	}
	hk.Known = known
	return hk
}

package bashssh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// ErrAuthRefused is matched (with errors.Is) by the error of a connection the server refused to
// authenticate.
var ErrAuthRefused = errors.New("authentication refused")

// ErrConnectionLost is matched by the error of a call whose connection broke while the command ran
// (the server went away, or stopped answering keepalives). The remote command may still be
// running; the executor stops it once it can reach the host again, and at Close.
var ErrConnectionLost = errors.New("connection lost")

// ConnectError reports a failure to connect to the remote host: the TCP connection, the handshake,
// host key verification or authentication. Its message names the user, the address and the cause.
type ConnectError struct {
	User string
	Addr string // host:port
	Err  error
}

// Error returns "bashssh: connect USER@ADDR: CAUSE".
func (e *ConnectError) Error() string {
	return fmt.Sprintf("bashssh: connect %s@%s: %v", e.User, e.Addr, e.Err)
}

// Unwrap returns the cause.
func (e *ConnectError) Unwrap() error { return e.Err }

// HostKeyError reports a host key that is not trusted: unknown to the known_hosts files, different
// from the key recorded there, revoked, or a host certificate that no @cert-authority line vouches
// for. Connecting is refused in every case.
type HostKeyError struct {
	// Host is the address as known_hosts writes it ("host" or "[host]:port").
	Host string
	// Offered is the key the server presented; Fingerprint its SHA256 fingerprint.
	Offered     ssh.PublicKey
	Fingerprint string
	// Known are the keys known_hosts holds for Host (empty for an unknown host).
	Known []knownhosts.KnownKey
	// Revoked reports a key marked @revoked (the host key, the key a certificate certifies, or the
	// certificate's CA).
	Revoked bool
	// Files are the known_hosts files that were consulted (empty with a custom callback).
	Files []string
	// Err is the error of a custom Config.HostKeyCallback, if that is what refused the key, or why
	// a host certificate or a certificate authority's key was refused (a CA not trusted for the
	// host, an expired certificate, a host name not among its principals, a @cert-authority key
	// presented as a plain host key).
	Err error
}

// Error describes the refusal, naming the host, the offered key's fingerprint and, for a changed
// key, where the recorded key is.
func (e *HostKeyError) Error() string {
	offered := e.Offered.Type() + " " + e.Fingerprint
	switch {
	case e.Err != nil:
		return fmt.Sprintf("host key %s of %s refused: %v", offered, e.Host, e.Err)
	case e.Revoked:
		return fmt.Sprintf("host key %s of %s is marked @revoked in known_hosts; refusing to connect", offered, e.Host)
	case len(e.Known) == 0:
		return fmt.Sprintf("host key verification failed: %s is not in known_hosts (%s); the server offered %s: check it out of band, then add the line %q",
			e.Host, strings.Join(e.Files, ", "), offered, knownhosts.Line([]string{e.Host}, e.Offered))
	default:
		var known []string
		for _, k := range e.Known {
			known = append(known, fmt.Sprintf("%s:%d holds %s %s", k.Filename, k.Line, k.Key.Type(), ssh.FingerprintSHA256(k.Key)))
		}
		return fmt.Sprintf("host key verification failed: HOST KEY CHANGED for %s: the server offered %s, but %s; refusing to connect (the host may have been reinstalled, or someone may be intercepting the connection)",
			e.Host, offered, strings.Join(known, "; "))
	}
}

// Unwrap returns the custom callback's error, if any.
func (e *HostKeyError) Unwrap() error { return e.Err }

// dialer connects to the configured host.
type dialer struct {
	cfg     Config
	addr    string
	signers []ssh.Signer // from IdentityFiles
}

func newDialer(cfg Config) (*dialer, error) {
	d := &dialer{cfg: cfg, addr: net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port))}
	for _, path := range cfg.IdentityFiles {
		pem, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("bashssh: identity file: %w", err)
		}
		signer, err := ssh.ParsePrivateKey(pem)
		var missing *ssh.PassphraseMissingError
		switch {
		case errors.As(err, &missing):
			return nil, fmt.Errorf("bashssh: identity file %s is protected by a passphrase: load it into ssh-agent instead", path)
		case err != nil:
			return nil, fmt.Errorf("bashssh: identity file %s: %w", path, err)
		}
		d.signers = append(d.signers, signer)
	}
	if cfg.HostKeyCallback == nil {
		if _, err := readHostDB(cfg.KnownHostsFiles); err != nil {
			return nil, fmt.Errorf("bashssh: known_hosts: %w", err)
		}
	}
	return d, nil
}

// hostKeys returns the host key callback and the key algorithms to ask the server for. known_hosts
// files are read again on every connection, so that a key added while the executor runs is used.
func (d *dialer) hostKeys() (ssh.HostKeyCallback, []string, error) {
	if d.cfg.HostKeyCallback != nil {
		custom := d.cfg.HostKeyCallback
		return func(host string, remote net.Addr, key ssh.PublicKey) error {
			if err := custom(host, remote, key); err != nil {
				return &HostKeyError{Host: knownhosts.Normalize(host), Offered: key, Fingerprint: ssh.FingerprintSHA256(key), Err: err}
			}
			return nil
		}, nil, nil
	}
	db, err := readHostDB(d.cfg.KnownHostsFiles)
	if err != nil {
		return nil, nil, fmt.Errorf("known_hosts: %w", err)
	}
	check := func(_ string, _ net.Addr, key ssh.PublicKey) error { return db.check(d.cfg.Host, d.cfg.Port, key) }
	return check, db.algorithms(hostName(d.cfg.Host, d.cfg.Port)), nil
}

// dial connects, authenticates and returns a client. ctx bounds the whole attempt together with
// DialTimeout. Every error is a *ConnectError.
func (d *dialer) dial(ctx context.Context) (*ssh.Client, error) {
	wrap := func(err error) error { return &ConnectError{User: d.cfg.User, Addr: d.addr, Err: err} }
	ctx, cancel := context.WithTimeout(ctx, d.cfg.DialTimeout)
	defer cancel()
	hostKeys, algos, err := d.hostKeys()
	if err != nil {
		return nil, wrap(err)
	}
	var agentConn net.Conn
	var agentErr error
	if d.cfg.AgentSocket != "" {
		var nd net.Dialer
		agentConn, agentErr = nd.DialContext(ctx, "unix", d.cfg.AgentSocket)
		if agentErr != nil && len(d.signers) == 0 {
			return nil, wrap(fmt.Errorf("ssh-agent at %s: %w", d.cfg.AgentSocket, agentErr))
		}
	}
	if agentConn != nil {
		defer agentConn.Close()
	}
	tried := 0
	auth := ssh.PublicKeysCallback(func() ([]ssh.Signer, error) {
		var all []ssh.Signer
		if agentConn != nil {
			if s, err := agent.NewClient(agentConn).Signers(); err == nil {
				all = append(all, s...)
			}
		}
		all = append(all, d.signers...)
		tried = len(all)
		return all, nil
	})
	cfg := &ssh.ClientConfig{
		User:              d.cfg.User,
		Auth:              []ssh.AuthMethod{auth},
		HostKeyCallback:   hostKeys,
		HostKeyAlgorithms: algos,
	}
	nd := net.Dialer{KeepAlive: 30 * time.Second}
	tcp, err := nd.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, wrap(fmt.Errorf("no TCP connection within %v: %w", d.cfg.DialTimeout, err))
		}
		return nil, wrap(err)
	}
	stop := context.AfterFunc(ctx, func() { tcp.SetDeadline(time.Unix(1, 0)) })
	sc, chans, reqs, err := ssh.NewClientConn(tcp, d.addr, cfg)
	if !stop() {
		if err == nil {
			sc.Close()
		} else {
			tcp.Close()
		}
		if ctx.Err() == context.DeadlineExceeded && context.Cause(ctx) == context.DeadlineExceeded {
			return nil, wrap(fmt.Errorf("no SSH handshake within %v (is it an SSH server?)", d.cfg.DialTimeout))
		}
		return nil, wrap(context.Cause(ctx))
	}
	if err != nil {
		tcp.Close()
		var hk *HostKeyError
		switch {
		case errors.As(err, &hk):
			return nil, wrap(hk)
		case strings.Contains(err.Error(), "unable to authenticate"):
			what := fmt.Sprintf("%d key(s)", tried)
			if agentErr != nil {
				what += fmt.Sprintf("; ssh-agent at %s unusable: %v", d.cfg.AgentSocket, agentErr)
			}
			return nil, wrap(fmt.Errorf("%w for user %s (offered %s): %v", ErrAuthRefused, d.cfg.User, what, err))
		case len(algos) > 0 && strings.Contains(err.Error(), "no common algorithm for host key"):
			return nil, wrap(fmt.Errorf("host key verification failed: the server offers none of the key types known_hosts holds for %s (%s); its host key may have changed: %v",
				knownhosts.Normalize(d.addr), strings.Join(algos, ", "), err))
		}
		return nil, wrap(err)
	}
	tcp.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

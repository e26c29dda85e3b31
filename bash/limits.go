package bash

import (
	"fmt"
	"time"
)

// Defaults that [Limits.SetDefaults] gives to zero fields. Every backend uses them, so that
// swapping backends changes nothing a model sees.
const (
	DefaultTimeout        = 120 * time.Second
	DefaultMaxTimeout     = 600 * time.Second
	DefaultMaxOutputBytes = 64_000
	DefaultHeadBytes      = 16_000
	DefaultMaxSpillBytes  = 64 << 20
	DefaultGrace          = 3 * time.Second
	// MaxGrace bounds Grace (what a millisecond count in an int32 can carry); a larger value is
	// refused.
	MaxGrace = 2_147_483_647 * time.Millisecond
)

// Limits are the bounds of time and memory an executor applies to every command. Every backend's
// Config embeds them (as x/crypto/ssh's ClientConfig and ServerConfig embed Config), so the
// fields, their defaults and their checks are written once. The zero value takes every default.
type Limits struct {
	// Timeout is the default foreground timeout (120 s); MaxTimeout caps it and every request's
	// own timeout (600 s). Timeout must not exceed MaxTimeout.
	Timeout    time.Duration
	MaxTimeout time.Duration
	// MaxOutputBytes is the per-stream in-memory budget (64,000 bytes), of which the first
	// HeadBytes (16,000, or a quarter of a smaller MaxOutputBytes) are kept whatever follows and
	// the rest is a byte-exact tail. HeadBytes must be less than MaxOutputBytes.
	MaxOutputBytes int
	HeadBytes      int
	// MaxSpillBytes caps each spill file (64 MiB): past it the file keeps the first MaxSpillBytes
	// bytes and is reported as partial.
	MaxSpillBytes int64
	// Grace plays two parts, as os/exec's WaitDelay does: it is the time between SIGTERM and
	// SIGKILL when a command is stopped, and how long output is still collected after the
	// command's shell has exited while something else holds its pipes (3 s; at most MaxGrace).
	Grace time.Duration
}

// SetDefaults gives every zero field of l its default. A zero Timeout becomes the smaller of
// DefaultTimeout and MaxTimeout.
func (l *Limits) SetDefaults() {
	if l.MaxTimeout == 0 {
		l.MaxTimeout = DefaultMaxTimeout
	}
	if l.Timeout == 0 {
		// A cap below the default timeout lowers the default with it; a Timeout that is set is
		// checked against the cap by Validate instead.
		l.Timeout = min(DefaultTimeout, max(l.MaxTimeout, 0))
		if l.Timeout == 0 {
			l.Timeout = DefaultTimeout
		}
	}
	if l.MaxOutputBytes == 0 {
		l.MaxOutputBytes = DefaultMaxOutputBytes
	}
	if l.HeadBytes == 0 {
		l.HeadBytes = min(DefaultHeadBytes, l.MaxOutputBytes/4)
	}
	if l.MaxSpillBytes == 0 {
		l.MaxSpillBytes = DefaultMaxSpillBytes
	}
	if l.Grace == 0 {
		l.Grace = DefaultGrace
	}
}

// Validate reports the first problem of l, naming the field ("bash: Limits.Timeout 15m0s is
// above Limits.MaxTimeout 10m0s"). Call it after SetDefaults: a zero field is refused.
func (l Limits) Validate() error {
	bad := func(field, problem string, args ...any) error {
		return fmt.Errorf("bash: Limits.%s "+problem, append([]any{field}, args...)...)
	}
	switch {
	case l.Timeout <= 0:
		return bad("Timeout", "must be positive, got %v", l.Timeout)
	case l.MaxTimeout <= 0:
		return bad("MaxTimeout", "must be positive, got %v", l.MaxTimeout)
	case l.Timeout > l.MaxTimeout:
		return bad("Timeout", "%v is above Limits.MaxTimeout %v", l.Timeout, l.MaxTimeout)
	case l.MaxOutputBytes <= 0:
		return bad("MaxOutputBytes", "must be positive, got %d", l.MaxOutputBytes)
	case l.HeadBytes < 0 || l.HeadBytes >= l.MaxOutputBytes:
		return bad("HeadBytes", "must be at least 0 and less than Limits.MaxOutputBytes (%d), got %d", l.MaxOutputBytes, l.HeadBytes)
	case l.MaxSpillBytes <= 0:
		return bad("MaxSpillBytes", "must be positive, got %d", l.MaxSpillBytes)
	case l.Grace <= 0:
		return bad("Grace", "must be positive, got %v", l.Grace)
	case l.Grace > MaxGrace:
		return bad("Grace", "must be no greater than %v, got %v", MaxGrace, l.Grace)
	}
	return nil
}

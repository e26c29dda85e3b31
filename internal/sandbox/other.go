//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// Probe reports what this machine offers the sandbox: nothing outside Linux.
func Probe() Support { return Support{Platform: "not Linux (" + runtime.GOOS + ")"} }

// Start starts cmd. Outside Linux only a best-effort policy gets this far, and it runs unconfined;
// Unenforced says so.
func (p *Prepared) Start(cmd *exec.Cmd) error { return cmd.Start() }

type ruleset struct{}

type ruleCache struct{ abi int }

func (c *ruleCache) get(resolved, bool) (*ruleset, error) { return nil, nil }

func (c *ruleCache) close() {}

type threadPool struct{}

var threads threadPool

func (threadPool) acquire() {}

func (threadPool) release() {}

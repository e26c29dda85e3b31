package bashtest

// cases is the kit: every named check, in the order reports list them.
var cases = []testCase{
	{name: "resolve/defaults", check: resolveDefaults},
	{name: "resolve/timeout-cap", check: resolveTimeoutCap},
	{name: "resolve/verbatim", check: resolveVerbatim},
	{name: "resolve/invalid", check: resolveInvalid},
	{name: "request/unresolved", check: requestHandMade},

	{name: "run/exit-and-streams", check: runExitAndStreams},
	{name: "run/workdir", check: runWorkdir},
	{name: "run/stdin-env", check: runStdinEnv},
	{name: "run/timeout", check: runTimeout},
	{name: "run/timeout-term-trapped", check: runTimeoutTermTrapped},
	{name: "run/timeout-trap-exit-0", check: runTimeoutTrapExit0},
	{name: "run/abort", check: runAbort},
	{name: "run/self-signal", check: runSelfSignal},
	{name: "run/pre-cancelled", check: runPreCancelled},
	{name: "run/bad-workdir", check: runBadWorkdir},
	{name: "run/background-child", check: runBackgroundChild},
	{name: "run/output-caps", check: runOutputCaps},
	{name: "run/progress", check: runProgress},

	{name: "start/lifecycle", check: startLifecycle},
	{name: "start/ids-and-order", check: startIDsAndOrder},
	{name: "start/exit-facts", check: startExitFacts},
	{name: "start/stdin-env", check: startStdinEnv},
	{name: "start/spawn-failure", check: startSpawnFailure},

	{name: "read/incremental", check: readIncremental},
	{name: "read/merge", check: readMerge},
	{name: "read/lossy-stdout", check: func(c *kc) { readLossy(c, false) }},
	{name: "read/lossy-stderr", check: func(c *kc) { readLossy(c, true) }},
	{name: "read/concurrent", check: readConcurrent},

	{name: "kill/running", check: killRunning},
	{name: "kill/term-trapped", check: killTermTrapped},
	{name: "kill/trap-exit-0", check: killTrapExit0},
	{name: "kill/finished", check: killFinished},

	{name: "unknown-id", check: unknownID},
	{name: "owner/tokens", check: ownerTokens},

	{name: "escapees/kill", escapees: true, check: escapeesKill},
	{name: "escapees/kill-waits", escapees: true, check: escapeesKillWaits},
	{name: "escapees/timeout", escapees: true, check: escapeesTimeout},
	{name: "escapees/close", escapees: true, check: escapeesClose},

	{name: "listeners/once", check: listenersOnce},
	{name: "listeners/order-unsubscribe", check: listenersOrderUnsubscribe},
	{name: "listeners/panic", check: listenersPanic},

	{name: "close/kills-and-waits", check: closeKillsAndWaits},
	{name: "close/expired-context", check: closeExpiredContext},
	{name: "close/idempotent", check: closeIdempotent},

	{name: "concurrent-use", check: concurrentUse},
}

package tools

import "context"

// Progress is a report of a call's work while it runs: Bytes of output so far and a Message to
// show (the last line of output, for the bash tools).
type Progress struct {
	Bytes   int64
	Message string
}

// ProgressReporter receives the progress of one call. A tool calls it from any goroutine while
// the call runs, never after its handler has returned; it must not block for long.
type ProgressReporter func(Progress)

type progressKey struct{}

// WithProgress returns ctx carrying r as the progress reporter of the call run with it; a nil r
// returns ctx unchanged. The harness sets it when its client asked for progress.
func WithProgress(ctx context.Context, r ProgressReporter) context.Context {
	if r == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, r)
}

// ProgressFrom returns the progress reporter ctx carries, or nil when the caller asked for none:
// a tool then does not watch its progress at all.
func ProgressFrom(ctx context.Context) ProgressReporter {
	r, _ := ctx.Value(progressKey{}).(ProgressReporter)
	return r
}

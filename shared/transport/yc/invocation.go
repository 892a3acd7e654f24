package yc

import (
	"context"
	"time"
)

// Context keys set by the Go runtime (platform-notes §1.4). They are plain
// strings, so they are read with ctx.Value("<key>").
const (
	requestIDKey  = "lambdaRuntimeRequestID"
	functionIDKey = "lambdaRuntimeFunctionName"
	versionIDKey  = "lambdaRuntimeFunctionVersion"
)

// RequestID returns the invocation's request id set by the Cloud Functions
// runtime, or "" outside the platform (or when WithInvocation was not used).
func RequestID(ctx context.Context) string {
	s, _ := ctx.Value(requestIDKey).(string)
	return s
}

// FunctionID returns the id of the running function set by the Cloud
// Functions runtime (the key is named "FunctionName" but holds the id), or "".
func FunctionID(ctx context.Context) string {
	s, _ := ctx.Value(functionIDKey).(string)
	return s
}

// FunctionVersion returns the id of the running function version set by the
// Cloud Functions runtime, or "" outside the platform.
func FunctionVersion(ctx context.Context) string {
	s, _ := ctx.Value(versionIDKey).(string)
	return s
}

// WithInvocation returns ctx carrying requestID and functionID under the same
// plain string keys the runtime uses, so the local runner and tests can
// invoke handlers as the platform does. Empty values are not set.
func WithInvocation(ctx context.Context, requestID, functionID string) context.Context {
	if requestID != "" {
		//nolint:staticcheck // SA1029: must be the runtime's plain string key.
		ctx = context.WithValue(ctx, requestIDKey, requestID)
	}
	if functionID != "" {
		//nolint:staticcheck // SA1029: must be the runtime's plain string key.
		ctx = context.WithValue(ctx, functionIDKey, functionID)
	}
	return ctx
}

// TimeLeft returns how long remains until ctx's deadline as seen at now,
// clamped at zero; ok is false when ctx has no deadline. Whether the Go
// runtime sets a deadline from the function timeout is unconfirmed, so
// callers need a fallback (see WorkBudget).
func TimeLeft(ctx context.Context, now time.Time) (left time.Duration, ok bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return 0, false
	}
	if left = dl.Sub(now); left < 0 {
		left = 0
	}
	return left, true
}

// WorkBudget returns how long a bounded batch may run: the time left on ctx
// minus reserve (kept for acknowledging, committing and returning), or
// fallback when ctx has no deadline (e.g. the configured function timeout
// minus the same reserve). It never returns a negative duration.
func WorkBudget(ctx context.Context, now time.Time, reserve, fallback time.Duration) time.Duration {
	left, ok := TimeLeft(ctx, now)
	if !ok {
		return max(fallback, 0)
	}
	return max(left-reserve, 0)
}

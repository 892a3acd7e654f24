// Package handlers holds the body of every cloud function: decode the
// platform event, call a use case, encode the result. functions/*/index.go
// only fetch the per-instance App and call one of these; the local runner
// calls the very same functions, so both run identical code paths.
package handlers

import (
	"context"
	"os"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
)

// ErrorReport is the JSON answer to an event that cannot be processed as
// sent (bad envelope, bad command). It changes nothing and is returned as a
// successful invocation result: re-sending the same bad event cannot help.
type ErrorReport struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody describes what is wrong.
type ErrorBody struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Fields  any    `json:"fields,omitempty"`
}

// Report builds an ErrorReport from err.
func Report(err error) ErrorReport {
	b := ErrorBody{Kind: apperr.KindOf(err).String(), Message: apperr.Message(err)}
	if f := apperr.Fields(err); len(f) > 0 {
		b.Fields = f
	}
	return ErrorReport{Error: b}
}

// Func is the shape every function body has, as the local runner and the
// tests invoke it.
type Func func(ctx context.Context, a *app.App, raw []byte) (any, error)

// Body is a function body with its own result type (the cloud entry points
// need the HTTP function's *yc.HTTPResponse).
type Body[T any] func(ctx context.Context, a *app.App, raw []byte) (T, error)

// Invocation wraps a body with what every invocation does whatever the
// body does: push the metrics the invocation recorded before it returns
// (in the cloud that is the only moment Yandex Monitoring gets them),
// whatever the outcome; a push failure never fails the invocation.
func Invocation[T any](body Body[T]) Body[T] {
	return func(ctx context.Context, a *app.App, raw []byte) (T, error) {
		defer a.FlushMetrics(ctx)
		return body(ctx, a, raw)
	}
}

// The function bodies, each wrapped in the invocation middleware.
var (
	OrderAPI     = Invocation(orderAPI)
	OutboxRelay  = Invocation(outboxRelay)
	SagaAdvancer = Invocation(sagaAdvancer)
	SagaRecovery = Invocation(sagaRecovery)
	DLQRedrive   = Invocation(dlqRedrive)
)

// Registry maps function names (the folders under functions/) to their
// bodies (the local runner and the tests invoke functions through it).
var Registry = map[string]Func{
	"orderapi":     anyResult(OrderAPI),
	"outboxrelay":  anyResult(OutboxRelay),
	"sagaadvancer": anyResult(SagaAdvancer),
	"sagarecovery": anyResult(SagaRecovery),
	"dlqredrive":   anyResult(DLQRedrive),
}

func anyResult[T any](b Body[T]) Func {
	return func(ctx context.Context, a *app.App, raw []byte) (any, error) { return b(ctx, a, raw) }
}

// orderAPI serves one API Gateway HTTP invocation (payload format 1.0).
func orderAPI(ctx context.Context, a *app.App, raw []byte) (*yc.HTTPResponse, error) {
	resp, err := yc.ServeEvent(a.HTTP, ctx, raw)
	if err != nil {
		// A malformed gateway event: answer 400 problem+json, never a 502.
		status, body := httpapi.ProblemBody(apperr.Wrap(apperr.Invalid, err, "%s", apperr.Message(err)), "")
		return &yc.HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/problem+json"}, Body: string(body)}, nil
	}
	return &resp, nil
}

// outboxRelay handles one timer firing: relay bounded batches until the
// outbox is drained or the work budget (the invocation's deadline less a
// reserve) is spent.
func outboxRelay(ctx context.Context, a *app.App, raw []byte) (any, error) {
	if _, err := yc.DecodeTimer(raw); err != nil {
		return Report(err), nil
	}
	rep, err := a.Commands.RelayOutbox.Run(ctx, yc.WorkBudget(ctx, a.Now(), 5*time.Second, a.Config.Relay.Budget))
	if err != nil {
		// Returning the error marks the invocation failed (visible in
		// monitoring); the rows stay pending and the next firing retries.
		return nil, err
	}
	return rep, nil
}

// coldStartLog logs cold-start failures, before any App (and its logger)
// exists, in the same JSON format as every other line.
var coldStartLog = app.NewLogger(os.Stderr, "info")

// ColdStartFailed answers an HTTP invocation whose instance could not be
// built (configuration, or YDB unreachable at cold start) with a 503
// problem+json and Retry-After, instead of the platform's bare 502; the
// cause goes to the log, not to the client.
func ColdStartFailed(err error) *yc.HTTPResponse {
	coldStartLog.Error("cold start failed", "error", err.Error())
	status, body := httpapi.ProblemBody(apperr.New(apperr.Transient,
		"the service is starting or misconfigured; retry later with the same Idempotency-Key"), "")
	return &yc.HTTPResponse{StatusCode: status, Body: string(body),
		Headers: map[string]string{"Content-Type": "application/problem+json", "Retry-After": "5"}}
}

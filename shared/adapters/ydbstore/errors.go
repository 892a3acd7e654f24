package ydbstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry"
	"github.com/ydb-platform/ydb-go-sdk/v3/retry/budget"

	"ordersaga/shared/domain/apperr"
)

// timeoutStatuses are server-side timeouts and cancellations. The SDK does
// not retry them (the outcome of a commit is unknown), but the request may
// succeed later, and every write of ordersaga is keyed, so a retry by the
// caller is safe: Transient.
var timeoutStatuses = []Ydb.StatusIds_StatusCode{
	Ydb.StatusIds_TIMEOUT,
	Ydb.StatusIds_CANCELLED,
}

// errAttemptsExhausted is returned by attemptBudget when a transaction has
// run Config.MaxAttempts times.
var errAttemptsExhausted = errors.New("ydbstore: transaction retried too many times")

// classify translates an SDK error into the apperr vocabulary, by status
// code and error identity only (never by message text). what (with args)
// describes the operation in the caller-safe message. Errors that already
// carry a kind pass through unchanged.
//
//   - PRECONDITION_FAILED carrying issue code 2012 (KIKIMR_CONSTRAINT_VIOLATION,
//     "Conflict with existing key": an INSERT of an existing primary key;
//     yql/essentials/core/issue/protos/issue_id.proto) → Conflict, matched
//     through the SDK's ydb.IterateByIssues; PRECONDITION_FAILED without it
//     (the status is also used for other limits) → Internal;
//   - query.ErrNoRows → NotFound;
//   - every status the SDK's retryer retries for an idempotent operation
//     (ABORTED incl. "transaction locks invalidated", UNAVAILABLE,
//     OVERLOADED, BAD_SESSION, SESSION_BUSY, UNDETERMINED, SESSION_EXPIRED,
//     retryable transport errors) once the retry budget or the context is
//     exhausted, the timeoutStatuses, and context expiry → Transient;
//   - anything else (SCHEME_ERROR, BAD_REQUEST, UNAUTHORIZED, GENERIC_ERROR,
//     ABORTED for a too-large program, ...) → Internal.
func classify(ctx context.Context, err error, what string, args ...any) error {
	if err == nil {
		return nil
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	msg := fmt.Sprintf(what, args...)
	switch {
	case ydb.IsOperationError(err, Ydb.StatusIds_PRECONDITION_FAILED) && hasIssue(err, issueConstraintViolation):
		return apperr.Wrap(apperr.Conflict, err, "%s: already exists", msg)
	case errors.Is(err, query.ErrNoRows):
		return apperr.Wrap(apperr.NotFound, err, "%s not found", msg)
	case sdkRetryable(err, true):
		return apperr.Wrap(apperr.Transient, err, "%s: database busy or unavailable", msg)
	case ydb.IsOperationError(err, timeoutStatuses...):
		return apperr.Wrap(apperr.Transient, err, "%s: timed out", msg)
	case errors.Is(err, errAttemptsExhausted), errors.Is(err, budget.ErrNoQuota):
		return apperr.Wrap(apperr.Transient, err, "%s: too many conflicting retries", msg)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled), ctx.Err() != nil:
		return apperr.Wrap(apperr.Transient, errors.Join(ctx.Err(), err), "%s: interrupted", msg)
	}
	return apperr.Wrap(apperr.Internal, err, "%s", msg)
}

// issueConstraintViolation is YDB's issue code KIKIMR_CONSTRAINT_VIOLATION
// ("Conflict with existing key").
const issueConstraintViolation = 2012

// hasIssue reports whether err's issue tree (nested issues included) holds code.
func hasIssue(err error, code Ydb.StatusIds_StatusCode) bool {
	found := false
	ydb.IterateByIssues(err, func(_ string, c Ydb.StatusIds_StatusCode, _ uint32) {
		if c == code {
			found = true
		}
	})
	return found
}

// retryableBeforeCommit marks an error of a statement that did not carry the
// commit as retryable by DoTx, when the SDK would retry it for an idempotent
// operation only (transport Unavailable, Internal, Canceled,
// DeadlineExceeded; UNDETERMINED, SESSION_EXPIRED: "conditionally retryable"
// in internal/xerrors of ydb-go-sdk v3.127.4). The transaction has not been
// committed, and a serializable transaction that never committed left
// nothing behind, so running the closure again on a fresh session is safe
// whatever the statement did. Errors carrying a kind (apperr) and errors the
// SDK retries anyway pass through.
func retryableBeforeCommit(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return err
	}
	if sdkRetryable(err, true) && !sdkRetryable(err, false) {
		return retry.RetryableError(err, retry.WithBackoff(retry.TypeFastBackoff))
	}
	return err
}

// sdkRetryable reports whether the SDK's retryer would run an operation
// again after err (idempotent tells whether the operation is idempotent).
// This is exactly the decision DoTx makes, so InTx uses it to tell a
// closure's own error (returned unchanged) from a YDB status the retryer
// gave up on (classified).
func sdkRetryable(err error, idempotent bool) bool {
	return err != nil && retry.Check(err).MustRetry(idempotent)
}

// txResult decides what InTx/View return once DoTx has finished with err.
// fnErr is what the closure returned on its last run (nil if it succeeded
// or never ran). A closure error the retryer does not retry is the caller's
// own decision and comes back unchanged (the store port promises that);
// everything else (a commit failure, a retryable status after the budget or
// the context ran out) is classified.
func txResult(ctx context.Context, err, fnErr error, idempotent bool, what string) error {
	if err == nil {
		return nil
	}
	if fnErr != nil && !sdkRetryable(fnErr, idempotent) {
		return fnErr
	}
	return classify(ctx, err, "%s", what)
}

// attemptBudget bounds the retries of one DoTx call. The SDK calls Acquire
// before the second and every later attempt.
type attemptBudget struct{ left int }

// newAttemptBudget allows maxAttempts runs in total.
func newAttemptBudget(maxAttempts int) *attemptBudget {
	return &attemptBudget{left: maxAttempts - 1}
}

// Acquire implements budget.Budget.
func (b *attemptBudget) Acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if b.left <= 0 {
		return errAttemptsExhausted
	}
	b.left--
	return nil
}

var _ budget.Budget = (*attemptBudget)(nil)

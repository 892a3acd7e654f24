package ydbstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Issue"
	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb_Operations"
	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/operation"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"google.golang.org/grpc"

	"ordersaga/shared/domain/apperr"
)

// statusConn is a grpc.ClientConnInterface that answers the operation
// service's CancelOperation with a fixed YDB status. It lets the tests get
// genuine SDK operation errors (built by the SDK's own code from a status
// code, as for any YDB response) without a server. It cancels the call's
// context after answering, so the SDK's retryer stops after one attempt.
type statusConn struct {
	status Ydb.StatusIds_StatusCode
	issues []*Ydb_Issue.IssueMessage
	cancel context.CancelFunc
}

func (c *statusConn) Invoke(_ context.Context, _ string, _, reply any, _ ...grpc.CallOption) error {
	r, ok := reply.(*Ydb_Operations.CancelOperationResponse)
	if !ok {
		return fmt.Errorf("statusConn: unexpected reply %T", reply)
	}
	r.Status, r.Issues = c.status, c.issues
	c.cancel()
	return nil
}

func (c *statusConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("statusConn: streams are not supported")
}

// sdkError returns the SDK's operation error for status (with issues).
func sdkError(t *testing.T, status Ydb.StatusIds_StatusCode, issues ...*Ydb_Issue.IssueMessage) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err := operation.New(ctx, &statusConn{status: status, issues: issues, cancel: cancel}).Cancel(ctx, "op-1")
	op := ydb.OperationError(err)
	if op == nil {
		t.Fatalf("status %v: the SDK returned no operation error (got %v)", status, err)
	}
	if !ydb.IsOperationError(op, status) {
		t.Fatalf("status %v: got operation error %v", status, op)
	}
	return op
}

func TestClassifyStatuses(t *testing.T) {
	tli := &Ydb_Issue.IssueMessage{Message: "Transaction locks invalidated", IssueCode: 2001}
	tooLarge := &Ydb_Issue.IssueMessage{Message: "program too large", IssueCode: 200509}
	dupKey := &Ydb_Issue.IssueMessage{Message: "Constraint violated", IssueCode: 1060,
		Issues: []*Ydb_Issue.IssueMessage{{Message: "Conflict with existing key.", IssueCode: 2012}}}
	otherLimit := &Ydb_Issue.IssueMessage{Message: "some other precondition", IssueCode: 2029}
	tests := []struct {
		name   string
		status Ydb.StatusIds_StatusCode
		issues []*Ydb_Issue.IssueMessage
		want   apperr.Kind
	}{
		{"duplicate primary key (nested issue 2012)", Ydb.StatusIds_PRECONDITION_FAILED, []*Ydb_Issue.IssueMessage{dupKey}, apperr.Conflict},
		{"precondition failed, another cause", Ydb.StatusIds_PRECONDITION_FAILED, []*Ydb_Issue.IssueMessage{otherLimit}, apperr.Internal},
		{"precondition failed, no issue", Ydb.StatusIds_PRECONDITION_FAILED, nil, apperr.Internal},
		{"locks invalidated", Ydb.StatusIds_ABORTED, []*Ydb_Issue.IssueMessage{tli}, apperr.Transient},
		{"aborted", Ydb.StatusIds_ABORTED, nil, apperr.Transient},
		{"aborted, program too large", Ydb.StatusIds_ABORTED, []*Ydb_Issue.IssueMessage{tooLarge}, apperr.Internal},
		{"unavailable", Ydb.StatusIds_UNAVAILABLE, nil, apperr.Transient},
		{"overloaded", Ydb.StatusIds_OVERLOADED, nil, apperr.Transient},
		{"bad session", Ydb.StatusIds_BAD_SESSION, nil, apperr.Transient},
		{"session busy", Ydb.StatusIds_SESSION_BUSY, nil, apperr.Transient},
		{"undetermined", Ydb.StatusIds_UNDETERMINED, nil, apperr.Transient},
		{"timeout", Ydb.StatusIds_TIMEOUT, nil, apperr.Transient},
		{"scheme error", Ydb.StatusIds_SCHEME_ERROR, nil, apperr.Internal},
		{"bad request", Ydb.StatusIds_BAD_REQUEST, nil, apperr.Internal},
		{"unauthorized", Ydb.StatusIds_UNAUTHORIZED, nil, apperr.Internal},
		{"generic error", Ydb.StatusIds_GENERIC_ERROR, nil, apperr.Internal},
		{"already exists (scheme)", Ydb.StatusIds_ALREADY_EXISTS, nil, apperr.Internal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sdkErr := sdkError(t, tt.status, tt.issues...)
			for _, err := range []error{sdkErr, fmt.Errorf("wrapped: %w", sdkErr)} {
				got := classify(context.Background(), err, "op %s", "x")
				if k := apperr.KindOf(got); k != tt.want {
					t.Errorf("classify(%v) kind = %v, want %v", err, k, tt.want)
				}
				if !errors.Is(got, sdkErr) {
					t.Errorf("classify lost the cause: %v", got)
				}
			}
		})
	}
}

func TestClassifyOtherErrors(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	kept := apperr.New(apperr.Rejected, "out of stock")
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want apperr.Kind
	}{
		{"no rows", context.Background(), fmt.Errorf("read: %w", query.ErrNoRows), apperr.NotFound},
		{"deadline", context.Background(), fmt.Errorf("x: %w", context.DeadlineExceeded), apperr.Transient},
		{"context ended", canceled, errors.New("stream closed"), apperr.Transient},
		{"attempts exhausted", context.Background(), errAttemptsExhausted, apperr.Transient},
		{"unknown", context.Background(), errors.New("boom"), apperr.Internal},
		{"already classified", context.Background(), kept, apperr.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.ctx, tt.err, "op")
			if k := apperr.KindOf(got); k != tt.want {
				t.Errorf("kind = %v, want %v (%v)", k, tt.want, got)
			}
		})
	}
	if classify(context.Background(), nil, "op") != nil {
		t.Error("classify(nil) != nil")
	}
	if got := classify(context.Background(), kept, "op"); got != kept {
		t.Errorf("a classified error must pass through unchanged, got %v", got)
	}
}

func TestTxResult(t *testing.T) {
	ctx := context.Background()
	aborted := sdkError(t, Ydb.StatusIds_ABORTED)
	dup := sdkError(t, Ydb.StatusIds_PRECONDITION_FAILED, &Ydb_Issue.IssueMessage{IssueCode: 2012})
	own := errors.New("the closure's own error")
	conflict := apperr.New(apperr.Conflict, "stale version")
	retryableWrapped := apperr.Wrap(apperr.Transient, aborted, "select")
	tests := []struct {
		name       string
		err, fnErr error
		same       error // the exact error txResult must return, if set
		want       apperr.Kind
	}{
		{"own plain error unchanged", fmt.Errorf("retry: %w", own), own, own, apperr.Internal},
		{"own apperr unchanged", fmt.Errorf("retry: %w", conflict), conflict, conflict, apperr.Conflict},
		{"commit aborted after the budget", aborted, nil, nil, apperr.Transient},
		{"statement aborted after the budget", errors.Join(errAttemptsExhausted, retryableWrapped), retryableWrapped, nil, apperr.Transient},
		{"duplicate key at commit", dup, nil, nil, apperr.Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := txResult(ctx, tt.err, tt.fnErr, false, "tx")
			if tt.same != nil && got != tt.same {
				t.Errorf("got %v, want the closure's error unchanged", got)
			}
			if k := apperr.KindOf(got); k != tt.want {
				t.Errorf("kind = %v, want %v (%v)", k, tt.want, got)
			}
		})
	}
	if txResult(ctx, nil, nil, false, "tx") != nil {
		t.Error("txResult(nil) != nil")
	}
}

func TestSDKRetryable(t *testing.T) {
	undetermined := sdkError(t, Ydb.StatusIds_UNDETERMINED)
	if sdkRetryable(undetermined, false) || !sdkRetryable(undetermined, true) {
		t.Error("UNDETERMINED must be retried only for idempotent operations (View)")
	}
	if !sdkRetryable(sdkError(t, Ydb.StatusIds_ABORTED), false) {
		t.Error("ABORTED must always be retried")
	}
	if sdkRetryable(sdkError(t, Ydb.StatusIds_PRECONDITION_FAILED), true) {
		t.Error("PRECONDITION_FAILED must never be retried")
	}
	if sdkRetryable(apperr.New(apperr.Transient, "app"), true) {
		t.Error("an application error is not the SDK's to retry")
	}
}

// TestRetryableBeforeCommit: a statement that failed with a status the SDK
// retries only for idempotent operations is made retryable for InTx (the
// transaction never committed); others pass unchanged.
func TestRetryableBeforeCommit(t *testing.T) {
	ctx := context.Background()
	for _, st := range []Ydb.StatusIds_StatusCode{Ydb.StatusIds_UNDETERMINED, Ydb.StatusIds_SESSION_EXPIRED} {
		err := sdkError(t, st)
		if sdkRetryable(err, false) {
			t.Fatalf("%v: the SDK already retries it for InTx; the test proves nothing", st)
		}
		got := retryableBeforeCommit(ctx, err)
		if !sdkRetryable(got, false) {
			t.Errorf("%v before commit: not retried by InTx", st)
		}
		if !errors.Is(got, err) {
			t.Errorf("%v: cause lost", st)
		}
	}
	for _, err := range []error{
		sdkError(t, Ydb.StatusIds_SCHEME_ERROR),
		sdkError(t, Ydb.StatusIds_ABORTED),
		apperr.New(apperr.Conflict, "app"),
	} {
		if got := retryableBeforeCommit(ctx, err); got != err {
			t.Errorf("%v changed to %v", err, got)
		}
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if u := sdkError(t, Ydb.StatusIds_UNDETERMINED); retryableBeforeCommit(done, u) != u {
		t.Error("an ended context must not be retried")
	}
}

func TestAttemptBudget(t *testing.T) {
	b := newAttemptBudget(3) // the first run plus two retries
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if err := b.Acquire(ctx); err != nil {
			t.Fatalf("retry %d: %v", i+1, err)
		}
	}
	if err := b.Acquire(ctx); !errors.Is(err, errAttemptsExhausted) {
		t.Fatalf("third retry: got %v, want errAttemptsExhausted", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := newAttemptBudget(5).Acquire(done); !errors.Is(err, context.Canceled) {
		t.Errorf("ended context: got %v", err)
	}
}

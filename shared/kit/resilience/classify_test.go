package resilience

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

func TestRetryableHTTPStatus(t *testing.T) {
	tests := []struct {
		code int
		want bool
	}{
		{200, false}, {204, false}, {301, false},
		{400, false}, {401, false}, {403, false}, {404, false}, {405, false},
		{408, true}, {409, false}, {410, false}, {412, false}, {413, false},
		{422, false}, {425, false}, {429, true}, {499, false},
		{500, true}, {501, false}, {502, true}, {503, true}, {504, true},
		{505, false}, {507, true}, {511, true}, {599, true}, {600, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.code), func(t *testing.T) {
			if got := RetryableHTTPStatus(tt.code); got != tt.want {
				t.Errorf("RetryableHTTPStatus(%d) = %v, want %v", tt.code, got, tt.want)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header string
		want   time.Duration
		wantOK bool
	}{
		{"delta seconds", "120", 2 * time.Minute, true},
		{"zero", "0", 0, true},
		{"surrounding space", "  5 ", 5 * time.Second, true},
		{"IMF-fixdate", "Wed, 21 Oct 2015 07:28:30 GMT", 30 * time.Second, true},
		{"RFC 850", "Wednesday, 21-Oct-15 07:29:00 GMT", time.Minute, true},
		{"asctime", "Wed Oct 21 07:30:00 2015", 2 * time.Minute, true},
		{"date in the past", "Wed, 21 Oct 2015 07:00:00 GMT", 0, true},
		{"saturates", "99999999999999999999999", maxDuration, true},
		{"empty", "", 0, false},
		{"negative", "-5", 0, false},
		{"plus sign", "+5", 0, false},
		{"fraction", "1.5", 0, false},
		{"garbage", "soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseRetryAfter(tt.header, now)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestNewHTTPStatusError(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	err := NewHTTPStatusError("payment.charge", 429, "7", now)
	var ra RetryAfterer
	if !errors.As(fmt.Errorf("wrapped: %w", err), &ra) || ra.RetryAfter() != 7*time.Second {
		t.Fatalf("RetryAfter hint not found through wrapping: %v", err)
	}
	if got, want := err.Error(), "payment.charge: http status 429 Too Many Requests"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// timeoutErr is a net.Error whose Timeout result is configurable.
type timeoutErr struct{ timeout bool }

func (e timeoutErr) Error() string   { return "net" }
func (e timeoutErr) Timeout() bool   { return e.timeout }
func (e timeoutErr) Temporary() bool { return false }

func TestDefaultRetryable(t *testing.T) {
	opErr := func(errno syscall.Errno) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: errno}}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain error", errors.New("boom"), false},
		{"apperr transient", apperr.New(apperr.Transient, "busy"), true},
		{"apperr internal", apperr.New(apperr.Internal, "bug"), false},
		{"apperr invalid", apperr.New(apperr.Invalid, "bad"), false},
		{"apperr conflict", apperr.New(apperr.Conflict, "dup"), false},
		{"apperr rejected", apperr.New(apperr.Rejected, "declined"), false},
		{"http 503", &HTTPStatusError{StatusCode: 503}, true},
		{"http 501", &HTTPStatusError{StatusCode: 501}, false},
		{"http 429 wrapped", fmt.Errorf("call: %w", &HTTPStatusError{StatusCode: 429}), true},
		{"http 404", &HTTPStatusError{StatusCode: 404}, false},
		{"apperr classification wins over http", apperr.Wrap(apperr.Invalid, &HTTPStatusError{StatusCode: 503}, "x"), false},
		{"apperr transient wins over http 400", apperr.Wrap(apperr.Transient, &HTTPStatusError{StatusCode: 400}, "x"), true},
		{"net timeout", timeoutErr{timeout: true}, true},
		{"net non-timeout", timeoutErr{timeout: false}, false},
		{"os deadline", fmt.Errorf("read: %w", os.ErrDeadlineExceeded), true},
		{"ECONNREFUSED", opErr(syscall.ECONNREFUSED), true},
		{"ECONNRESET", opErr(syscall.ECONNRESET), true},
		{"EACCES", opErr(syscall.EACCES), false},
		{"unexpected EOF", fmt.Errorf("body: %w", io.ErrUnexpectedEOF), true},
		{"deadline exceeded", fmt.Errorf("attempt: %w", context.DeadlineExceeded), true},
		{"caller canceled", fmt.Errorf("x: %w", context.Canceled), false},
		{"canceled even inside transient", apperr.Wrap(apperr.Transient, context.Canceled, "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultRetryable(tt.err); got != tt.want {
				t.Errorf("DefaultRetryable(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

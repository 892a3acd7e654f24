package resilience

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"ordersaga/shared/domain/apperr"
)

// RetryAfterer is implemented by errors that carry a server hint of how long
// to wait before retrying (an HTTP Retry-After header, a queue's throttling
// delay). [Retry] finds it with errors.As.
type RetryAfterer interface {
	// RetryAfter returns the hinted wait; <= 0 means no hint.
	RetryAfter() time.Duration
}

// HTTPStatusError reports a non-2xx answer from an HTTP dependency. Its
// retryability follows [RetryableHTTPStatus]; RetryAfterHint carries the
// parsed Retry-After header (see [ParseRetryAfter]).
type HTTPStatusError struct {
	// Op names the call, e.g. "payment.charge".
	Op string
	// StatusCode is the HTTP status code received.
	StatusCode int
	// RetryAfterHint is the server's Retry-After, 0 if absent.
	RetryAfterHint time.Duration
}

var _ RetryAfterer = (*HTTPStatusError)(nil)

// NewHTTPStatusError builds an HTTPStatusError, parsing a Retry-After header
// value (possibly empty) relative to now.
func NewHTTPStatusError(op string, statusCode int, retryAfterHeader string, now time.Time) *HTTPStatusError {
	hint, _ := ParseRetryAfter(retryAfterHeader, now)
	return &HTTPStatusError{Op: op, StatusCode: statusCode, RetryAfterHint: hint}
}

// Error implements error.
func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("http status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Op != "" {
		msg = e.Op + ": " + msg
	}
	return msg
}

// RetryAfter implements [RetryAfterer].
func (e *HTTPStatusError) RetryAfter() time.Duration { return e.RetryAfterHint }

// RetryableHTTPStatus reports whether a request answered with code may succeed
// if repeated: 408, 429 and 5xx except 501 (Not Implemented) and 505 (HTTP
// Version Not Supported). Every other code — notably 400, 401, 403, 404, 409,
// 422 — is permanent.
func RetryableHTTPStatus(code int) bool {
	switch {
	case code == http.StatusRequestTimeout, code == http.StatusTooManyRequests:
		return true
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported:
		return false
	default:
		return code >= 500 && code <= 599
	}
}

// ParseRetryAfter parses an HTTP Retry-After value (RFC 9110 §10.2.3): either
// delta-seconds ("120") or an HTTP-date (IMF-fixdate, RFC 850 or asctime),
// the latter relative to now. A date in the past yields (0, true). It returns
// false for an empty or malformed value. Huge delta-seconds saturate.
func ParseRetryAfter(header string, now time.Time) (time.Duration, bool) {
	v := strings.TrimSpace(header)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		const maxSecs = int64(maxDuration / time.Second)
		var secs int64
		for _, c := range v {
			secs = secs*10 + int64(c-'0')
			if secs > maxSecs {
				return maxDuration, true
			}
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// DefaultRetryable is the default retry predicate. In order:
//   - nil and context.Canceled (the caller gave up) → false;
//   - an error already classified by apperr → apperr.Retryable (only Transient);
//   - an [HTTPStatusError] → [RetryableHTTPStatus];
//   - context.DeadlineExceeded (an attempt timed out), net.Error timeouts,
//     ECONNREFUSED, ECONNRESET, io.ErrUnexpectedEOF → true;
//   - anything else → false (unknown errors are not retried blindly).
//
// An apperr classification wins over what it wraps: the adapter that
// classified the error knew more than this function does.
func DefaultRetryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return apperr.Retryable(err)
	}
	var he *HTTPStatusError
	if errors.As(err, &he) {
		return RetryableHTTPStatus(he.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

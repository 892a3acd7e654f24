package payments

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/resilience"
	"ordersaga/shared/kit/validate"
)

// maxResponseBytes bounds how much of a provider answer is read.
const maxResponseBytes = 64 << 10

// HTTPConfig configures an HTTPProvider (NewHTTPProvider).
type HTTPConfig struct {
	// BaseURL is the provider's root, e.g. "http://127.0.0.1:8081" (required).
	BaseURL string
	// Client is the HTTP client (default http.DefaultClient).
	Client *http.Client
	// Now parses Retry-After dates (default time.Now).
	Now func() time.Time
}

// HTTPProvider calls the provider's JSON API (see wire.go). It makes exactly
// one HTTP request per call: wrap it with NewGuarded for retries,
// breaker, bulkhead and per-attempt timeouts. Safe for concurrent use.
type HTTPProvider struct {
	cfg HTTPConfig
}

// NewHTTPProvider returns a provider client for cfg. It fails
// (apperr.Invalid, naming the field) without a BaseURL.
func NewHTTPProvider(cfg HTTPConfig) (*HTTPProvider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	return &HTTPProvider{cfg: cfg}, nil
}

// Validate reports what NewHTTPProvider would refuse: an HTTPConfig
// without a BaseURL. Errors are apperr.Invalid and name the field.
func (c HTTPConfig) Validate() error {
	var p validate.Problems
	p.Require(c.BaseURL != "", "BaseURL")
	return p.Err("payments.NewHTTPProvider")
}

// setDefaults gives each zero field of c its documented default.
func (c *HTTPConfig) setDefaults() {
	c.Client = cmp.Or(c.Client, http.DefaultClient)
	if c.Now == nil {
		c.Now = time.Now
	}
}

var _ Provider = (*HTTPProvider)(nil)

// Charge implements Provider. Besides the kinds Provider documents, a
// retryable HTTP status is returned as Transient wrapping a
// *resilience.HTTPStatusError (errors.As finds it and its Retry-After).
func (h *HTTPProvider) Charge(ctx context.Context, key string, amountMinor int64, currency string) (string, error) {
	var out ChargeResponse
	code, err := h.post(ctx, "payment.charge", PathCharges, key, ChargeRequest{AmountMinor: amountMinor, Currency: currency}, &out,
		http.StatusOK, http.StatusCreated, http.StatusPaymentRequired)
	if err != nil {
		return "", err
	}
	if code == http.StatusPaymentRequired || out.Status == WireDeclined {
		return "", apperr.New(apperr.Rejected, "payment declined: %s", out.Reason)
	}
	if out.Ref == "" {
		return "", apperr.New(apperr.Transient, "payment.charge: provider answered without a reference")
	}
	return out.Ref, nil
}

// Refund implements Provider; errors as for Charge.
func (h *HTTPProvider) Refund(ctx context.Context, key, chargeKey string, amountMinor int64, currency string) (bool, error) {
	var out RefundResponse
	_, err := h.post(ctx, "payment.refund", PathRefunds, key,
		RefundRequest{ChargeKey: chargeKey, AmountMinor: amountMinor, Currency: currency}, &out, http.StatusOK, http.StatusCreated)
	if err != nil {
		return false, err
	}
	return out.Refunded, nil
}

// post sends one JSON request and decodes an accepted answer into out. It
// returns the status code for accepted codes, and a classified error otherwise.
func (h *HTTPProvider) post(ctx context.Context, op, path, key string, in, out any, accepted ...int) (int, error) {
	if key == "" {
		return 0, apperr.New(apperr.Invalid, "%s: idempotency key is required", op)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return 0, apperr.Wrap(apperr.Internal, err, "%s: encode request", op)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(h.cfg.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return 0, apperr.Wrap(apperr.Invalid, err, "%s: build request", op)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotencyKey, key)
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		// The request may or may not have reached the provider: the outcome is
		// unknown, and repeating it with the same key is safe.
		return 0, apperr.Wrap(apperr.Transient, err, "%s: request failed", op)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return 0, apperr.Wrap(apperr.Transient, err, "%s: read answer", op)
	}
	for _, c := range accepted {
		if resp.StatusCode != c {
			continue
		}
		if err := json.Unmarshal(raw, out); err != nil {
			return 0, apperr.Wrap(apperr.Transient, err, "%s: decode answer", op)
		}
		return c, nil
	}
	he := resilience.NewHTTPStatusError(op, resp.StatusCode, resp.Header.Get("Retry-After"), h.cfg.Now())
	if resp.StatusCode == http.StatusConflict || resp.StatusCode == http.StatusTooEarly {
		// A request with this idempotency key is still being processed by
		// the provider (IETF Idempotency-Key draft): its outcome is unknown.
		// Conflict is not retried at once (requirements: never retry a 409)
		// and does not trip the breaker; the ledger service turns it into
		// "outcome unknown" (Transient), so the saga asks again later with
		// the same key, and never treats it as a refusal that skips the refund.
		return 0, apperr.Wrap(apperr.Conflict, he, "%s: the provider is still processing this key", op)
	}
	if resilience.RetryableHTTPStatus(resp.StatusCode) {
		return 0, apperr.Wrap(apperr.Transient, he, "%s: provider unavailable", op)
	}
	var e ErrorResponse
	_ = json.Unmarshal(raw, &e) // best effort: the text only enriches the message
	return 0, apperr.Wrap(apperr.Invalid, he, "%s: provider refused the request: %s", op, e.Error)
}

package paymentsim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/apperr"
)

// maxBody bounds a request body.
const maxBody = 64 << 10

// PathStats serves the counters (GET) and PathFaults changes the injected
// faults at run time (PUT {"failure_rate":0.5,"lost_answer_rate":0,"latency_ms":200}).
const (
	PathStats  = "/stats"
	PathFaults = "/faults"
)

// Faults is the body of PUT /faults.
type Faults struct {
	FailureRate    float64 `json:"failure_rate"`
	LostAnswerRate float64 `json:"lost_answer_rate"`
	LatencyMS      int64   `json:"latency_ms"`
}

// Handler returns the provider's JSON API (package payments, wire.go) over s.
func (s *Sim) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+payments.PathCharges, s.serveCharge)
	mux.HandleFunc("POST "+payments.PathRefunds, s.serveRefund)
	mux.HandleFunc("GET "+PathStats, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, s.Counters())
	})
	mux.HandleFunc("PUT "+PathFaults, s.serveFaults)
	return mux
}

func (s *Sim) serveCharge(w http.ResponseWriter, r *http.Request) {
	var in payments.ChargeRequest
	key, ok := decode(w, r, &in)
	if !ok {
		return
	}
	ref, err := s.Charge(r.Context(), key, in.AmountMinor, in.Currency)
	switch {
	case err == nil:
		writeJSON(w, http.StatusCreated, payments.ChargeResponse{Ref: ref, Status: payments.WireSucceeded})
	case apperr.Is(err, apperr.Rejected):
		writeJSON(w, http.StatusPaymentRequired, payments.ChargeResponse{Status: payments.WireDeclined, Reason: apperr.Message(err)})
	default:
		writeError(w, err)
	}
}

func (s *Sim) serveRefund(w http.ResponseWriter, r *http.Request) {
	var in payments.RefundRequest
	key, ok := decode(w, r, &in)
	if !ok {
		return
	}
	refunded, err := s.Refund(r.Context(), key, in.ChargeKey, in.AmountMinor, in.Currency)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, payments.RefundResponse{Refunded: refunded})
}

func (s *Sim) serveFaults(w http.ResponseWriter, r *http.Request) {
	var f Faults
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil || f.FailureRate < 0 || f.FailureRate > 1 ||
		f.LostAnswerRate < 0 || f.LostAnswerRate > 1 || f.LatencyMS < 0 {
		writeJSON(w, http.StatusBadRequest, payments.ErrorResponse{Error: "want {failure_rate, lost_answer_rate in [0,1], latency_ms >= 0}"})
		return
	}
	s.SetFaults(f.FailureRate, f.LostAnswerRate, time.Duration(f.LatencyMS)*time.Millisecond)
	writeJSON(w, http.StatusOK, f)
}

// decode reads the idempotency key and a JSON body; on failure it answers 400.
func decode(w http.ResponseWriter, r *http.Request, v any) (string, bool) {
	key := r.Header.Get(payments.HeaderIdempotencyKey)
	if key == "" {
		writeJSON(w, http.StatusBadRequest, payments.ErrorResponse{Error: "Idempotency-Key header is required"})
		return "", false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, payments.ErrorResponse{Error: "malformed JSON body"})
		return "", false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeJSON(w, http.StatusBadRequest, payments.ErrorResponse{Error: "trailing data after the JSON body"})
		return "", false
	}
	return key, true
}

// writeError maps an error kind to the API's status codes.
func writeError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch apperr.KindOf(err) {
	case apperr.Invalid:
		code = http.StatusUnprocessableEntity
	case apperr.Transient:
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, payments.ErrorResponse{Error: apperr.Message(err)})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the status is sent; a write error only means the client left
}

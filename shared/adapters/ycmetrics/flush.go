package ycmetrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/kit/text"
)

// writeRequest is the MetricsData.write body.
type writeRequest struct {
	TS      string            `json:"ts"`
	Labels  map[string]string `json:"labels,omitempty"`
	Metrics []point           `json:"metrics"`
}

// point is one metric value of a writeRequest.
type point struct {
	Name   string            `json:"name"`
	Labels map[string]string `json:"labels,omitempty"`
	Type   string            `json:"type"`
	TS     string            `json:"ts"`
	Value  float64           `json:"value"`
}

// writeResponse is the MetricsData.write answer; the docs show
// writtenMetricsCount and errorMessage (and an example with metrics_written).
type writeResponse struct {
	ErrorMessage string `json:"errorMessage"`
}

// maxErrorBody bounds how much of a response is read and quoted in errors.
const maxErrorBody = 64 << 10

// Flush pushes everything recorded since the previous Flush in one POST and
// clears the buffer (whatever the outcome: a failed push is not retried, its
// points are counted as dropped). It sends nothing when nothing was
// recorded. Errors: Unauthenticated (no token, 401), Forbidden (403),
// Invalid (other 4xx, or the API reported an error), Transient (network,
// timeout, 429, 5xx), Internal. Callers may ignore the error: Flush has
// already logged it. Safe for concurrent use.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	batch, unknown, dropped := r.series, r.unknown, r.dropped
	r.series, r.points, r.unknown, r.dropped = map[seriesKey]*series{}, 0, 0, map[string]float64{}
	r.mu.Unlock()

	req := r.build(batch, unknown, dropped)
	if len(req.Metrics) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	status, err := r.send(ctx, req)
	if err != nil {
		r.mu.Lock()
		r.dropped[metrics.DropFlushFailed] += float64(len(req.Metrics))
		r.mu.Unlock()
		r.cfg.Log.WarnContext(ctx, "metrics flush failed",
			"points", len(req.Metrics), "http_status", status, "error_kind", apperr.KindOf(err).String(), "error", err.Error())
		return err
	}
	return nil
}

// build turns a buffer into a request with a deterministic point order.
func (r *Recorder) build(batch map[seriesKey]*series, unknown float64, dropped map[string]float64) writeRequest {
	ts := r.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
	req := writeRequest{TS: ts, Labels: r.commonLabels()}
	keys := make([]seriesKey, 0, len(batch))
	for k := range batch {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return strings.Join(keys[i].vals[:], "\x00") < strings.Join(keys[j].vals[:], "\x00")
	})
	add := func(name string, labels map[string]string, v float64) {
		req.Metrics = append(req.Metrics, point{Name: name, Labels: labels, Type: "DGAUGE", TS: ts, Value: v})
	}
	for _, k := range keys {
		s := batch[k]
		labels := pointLabels(s.def, k.vals)
		switch s.def.Kind {
		case metrics.Counter:
			if s.value != 0 {
				add(k.name, labels, s.value)
			}
		case metrics.Gauge:
			add(k.name, labels, s.value)
		case metrics.Histogram:
			add(k.name+"_count", labels, s.count)
			add(k.name+"_sum", labels, s.sum)
			add(k.name+"_max", labels, s.max)
			for i, n := range s.buckets {
				if n == 0 {
					continue
				}
				bin := "inf"
				if i < len(s.def.Buckets) {
					bin = strconv.FormatFloat(s.def.Buckets[i], 'g', -1, 64)
				}
				bl := make(map[string]string, len(labels)+1)
				for lk, lv := range labels {
					bl[lk] = lv
				}
				bl["bin"] = bin
				add(k.name+"_bucket", bl, n)
			}
		}
	}
	if unknown > 0 {
		add(metrics.MetricsUnknown, nil, unknown)
	}
	reasons := make([]string, 0, len(dropped))
	for reason := range dropped {
		reasons = append(reasons, reason)
	}
	sort.Strings(reasons)
	for _, reason := range reasons {
		add(metrics.MetricsDropped, map[string]string{"reason": reason}, dropped[reason])
	}
	return req
}

func (r *Recorder) commonLabels() map[string]string {
	if r.cfg.Function == "" && len(r.cfg.Labels) == 0 {
		return nil
	}
	m := make(map[string]string, len(r.cfg.Labels)+1)
	for k, v := range r.cfg.Labels {
		m[k] = v
	}
	if r.cfg.Function != "" {
		m["function"] = r.cfg.Function
	}
	return m
}

// pointLabels maps label values to their keys, omitting empty values.
func pointLabels(d *metrics.Def, vals metrics.Values) map[string]string {
	var m map[string]string
	for i, key := range d.Labels {
		if vals[i] == "" {
			continue
		}
		if m == nil {
			m = make(map[string]string, len(d.Labels))
		}
		m[key] = vals[i]
	}
	return m
}

// send POSTs req and returns the HTTP status (0 if none was received).
func (r *Recorder) send(ctx context.Context, req writeRequest) (int, error) {
	token, err := r.cfg.Tokens.IAMToken(ctx)
	if err != nil {
		return 0, apperr.Wrap(apperr.Unauthenticated, err, "ycmetrics: no IAM token")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return 0, apperr.Wrap(apperr.Internal, err, "ycmetrics: encode request")
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.endpoint, bytes.NewReader(body))
	if err != nil {
		return 0, apperr.Wrap(apperr.Internal, err, "ycmetrics: build request")
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+token)
	resp, err := r.cfg.Client.Do(hreq)
	if err != nil {
		return 0, apperr.Wrap(apperr.Transient, err, "ycmetrics: write")
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	if err != nil && resp.StatusCode/100 != 2 {
		return resp.StatusCode, apperr.Wrap(apperr.Transient, err, "ycmetrics: write: HTTP %d", resp.StatusCode)
	}
	if resp.StatusCode/100 != 2 {
		return resp.StatusCode, apperr.Wrap(kindOfStatus(resp.StatusCode),
			errors.New(snippet(data)), "ycmetrics: write: HTTP %d", resp.StatusCode)
	}
	var wr writeResponse
	if json.Unmarshal(data, &wr) == nil && wr.ErrorMessage != "" {
		return resp.StatusCode, apperr.Wrap(apperr.Invalid, errors.New(snippet([]byte(wr.ErrorMessage))),
			"ycmetrics: write reported an error")
	}
	return resp.StatusCode, nil
}

// kindOfStatus classifies a non-2xx status of the write API.
func kindOfStatus(code int) apperr.Kind {
	switch {
	case code == http.StatusUnauthorized:
		return apperr.Unauthenticated
	case code == http.StatusForbidden:
		return apperr.Forbidden
	case code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500:
		return apperr.Transient
	case code == http.StatusRequestEntityTooLarge:
		return apperr.TooLarge
	case code >= 400:
		return apperr.Invalid
	}
	return apperr.Internal
}

// snippet is a short, single-line excerpt of a response for error messages.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	s = text.Clip(strings.ToValidUTF8(s, ""), 300)
	if s == "" {
		s = "empty response"
	}
	return s
}

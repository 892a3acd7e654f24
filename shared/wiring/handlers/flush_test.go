package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
)

// flushCounter counts pushes of the invocation's metrics.
type flushCounter struct {
	metrics.Recorder
	flushes int
}

func (f *flushCounter) Flush(ctx context.Context) error { f.flushes++; return f.Recorder.Flush(ctx) }

// Every function pushes its metrics once per invocation (in the cloud that
// is the only moment Yandex Monitoring gets them), whether it succeeded or not.
func TestEveryFunctionFlushesItsMetrics(t *testing.T) {
	fc := &flushCounter{}
	s := newSuiteWith(t, nil, func(p *app.Ports) { fc.Recorder = p.Metrics; p.Metrics = fc })
	httpEvent, _ := json.Marshal(map[string]any{"httpMethod": "GET", "path": "/orders/none", "headers": map[string]string{"Authorization": "Bearer dev-user"}})
	queueEvent, _ := yc.EncodeQueue("yrn:yc:ymq:ru-central1:t:saga-commands", []yc.QueueMessage{{MessageID: "m", Body: `{"saga_id":"nope"}`}})
	events := map[string][]byte{
		"orderapi": httpEvent, "outboxrelay": yc.EncodeTimer("t", "", time.Now()), "sagarecovery": yc.EncodeTimer("t", "", time.Now()),
		"sagaadvancer": queueEvent, "dlqredrive": []byte(`{"action":"stats"}`),
	}
	ctx := context.Background()
	for name := range Registry {
		ev, ok := events[name]
		if !ok {
			t.Fatalf("no sample event for function %s", name)
		}
		before := fc.flushes
		if _, err := Registry[name](ctx, s.app, ev); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fc.flushes != before+1 {
			t.Errorf("%s flushed its metrics %d times, want once", name, fc.flushes-before)
		}
		// A bad event is answered with a report and still flushes.
		before = fc.flushes
		_, _ = Registry[name](ctx, s.app, []byte(`{"bad":`))
		if fc.flushes != before+1 {
			t.Errorf("%s with a bad event flushed %d times, want once", name, fc.flushes-before)
		}
	}
}

func TestColdStartFailureIsA503ProblemWithoutInternals(t *testing.T) {
	r := ColdStartFailed(errors.New("YDB_CONNECTION_STRING=grpcs://secret-host: connection refused"))
	if r.StatusCode != 503 || r.Headers["Content-Type"] != "application/problem+json" || r.Headers["Retry-After"] == "" {
		t.Fatalf("response %+v", r)
	}
	if strings.Contains(r.Body, "secret-host") {
		t.Errorf("the cause leaked to the client: %s", r.Body)
	}
}

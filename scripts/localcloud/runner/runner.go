package runner

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/mqtrigger"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/triggers"
)

// maxInvokeBytes is the platform's request size limit (3.5 MB).
const maxInvokeBytes = 3_500_000

type runner struct {
	app            *app.App
	queue          queue.Queue  // the trigger emulation receives and deletes like the platform
	metricsHandler http.Handler // the Prometheus exposition (nil with ORDERSAGA_METRICS=none)
	log            *slog.Logger
	file           triggers.File
	functions      map[string]handlers.Func // the function bodies by name (handlers.Registry, faults applied)
}

// routes serves /_invoke/{function}, /_queues/{queue}, /metrics and, for everything else, the
// API exactly as API Gateway would call the orderapi function.
func (rt *runner) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/_invoke/", rt.invokeHTTP)
	mux.HandleFunc("/_queues/", rt.sendHTTP)
	mux.HandleFunc("/metrics", rt.metrics)
	mux.HandleFunc("/", rt.api)
	return mux
}

func (rt *runner) api(w http.ResponseWriter, r *http.Request) {
	ev, err := yc.NewHTTPRequestEvent(r, maxInvokeBytes)
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		httpapi.WriteError(w, r, apperr.Wrap(apperr.Internal, err, "encode the event"))
		return
	}
	ctx := yc.WithInvocation(r.Context(), uuid.NewString(), "orderapi")
	resp, err := handlers.OrderAPI(ctx, rt.app, raw)
	if err != nil {
		writeInvokeError(w, err)
		return
	}
	_ = yc.WriteHTTPResponse(w, *resp)
}

// invokeHTTP is `yc serverless function invoke` locally: raw event in, the
// function's JSON result out.
func (rt *runner) invokeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpapi.WriteStatus(w, r, http.StatusMethodNotAllowed, "POST the raw event JSON")
		return
	}
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/_invoke/"), "/")
	fn, ok := rt.functions[name]
	if !ok {
		httpapi.WriteError(w, r, apperr.New(apperr.NotFound, "no function named %q", name))
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxInvokeBytes+1))
	if err != nil || len(raw) > maxInvokeBytes {
		httpapi.WriteError(w, r, apperr.New(apperr.TooLarge, "request body exceeds %d bytes", maxInvokeBytes))
		return
	}
	res, err := rt.invoke(r.Context(), name, fn, raw)
	if err != nil {
		writeInvokeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

func (rt *runner) invoke(ctx context.Context, name string, fn handlers.Func, raw []byte) (res any, err error) {
	ctx = yc.WithInvocation(ctx, uuid.NewString(), name)
	defer func() {
		if p := recover(); p != nil {
			rt.log.Error("function panicked", "function", name, "panic", p)
			err = panicError{p}
		}
	}()
	// The self-check event is answered before the body, as each cloud
	// function's index.Handler does, on this App's (local) adapters.
	if selfcheck.Requested(raw) {
		return rt.app.Queries.SelfCheck.Check(ctx, name, ""), nil
	}
	return fn(ctx, rt.app, raw)
}

type panicError struct{ v any }

func (p panicError) Error() string {
	return "panic: " + strings.TrimSpace(strings.ReplaceAll(toString(p.v), "\n", " "))
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// writeInvokeError answers like the platform does for a failed invocation.
func writeInvokeError(w http.ResponseWriter, err error) {
	typ := "UserCodeError"
	if _, ok := err.(panicError); ok {
		typ = "UserCodePanic"
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Function-Error", "true")
	w.WriteHeader(http.StatusBadGateway)
	_ = json.NewEncoder(w).Encode(map[string]string{"errorMessage": err.Error(), "errorType": typ})
}

// start fires timers and polls queue triggers until ctx ends; the returned
// channel closes when every loop has stopped.
func (rt *runner) start(ctx context.Context) <-chan struct{} {
	var wg sync.WaitGroup
	for _, t := range rt.file.Timers {
		fn, ok := rt.functions[t.Function]
		if !ok {
			rt.log.Warn("timer names a function this build does not have", "timer", t.Name, "function", t.Function)
			continue
		}
		period, _ := t.Period()
		rt.log.Info("timer started", "timer", t.Name, "function", t.Function, "every", period.String())
		wg.Add(1)
		go func(t triggers.Timer, fn handlers.Func, period time.Duration) {
			defer wg.Done()
			rt.timerLoop(ctx, t, fn, period)
		}(t, fn, period)
	}
	for _, qt := range rt.file.QueueTriggers {
		fn, ok := rt.functions[qt.Function]
		if !ok {
			rt.log.Warn("queue trigger names a function this build does not have", "trigger", qt.Name, "function", qt.Function)
			continue
		}
		rt.log.Info("queue trigger started", "trigger", qt.Name, "queue", qt.Queue, "function", qt.Function, "batch_size", qt.BatchSize)
		wg.Add(1)
		go func(qt triggers.QueueTrigger, fn handlers.Func) {
			defer wg.Done()
			rt.queueLoop(ctx, qt, fn)
		}(qt, fn)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

func (rt *runner) timerLoop(ctx context.Context, t triggers.Timer, fn handlers.Func, period time.Duration) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		ictx, cancel := context.WithTimeout(ctx, 55*time.Second)
		res, err := rt.invoke(ictx, t.Function, fn, yc.EncodeTimer(t.Name, t.Payload, time.Now()))
		cancel()
		if err != nil && ctx.Err() == nil {
			rt.log.Warn("timer invocation failed", "timer", t.Name, "function", t.Function, "error", err)
		} else if err == nil {
			rt.log.Debug("timer fired", "timer", t.Name, "result", res)
		}
	}
}

// queueLoop plays the Message Queue trigger (shared/transport/mqtrigger): receive a
// batch, invoke the function with the trigger's envelope, delete the batch on
// success, leave it for redelivery (and, after max_receive_count, the DLQ) on
// error; up to mqtrigger.DefaultConcurrency invocations run at once, as
// function instances do in the cloud.
func (rt *runner) queueLoop(ctx context.Context, qt triggers.QueueTrigger, fn handlers.Func) {
	tr, err := mqtrigger.New(mqtrigger.Config{
		Queue: rt.queue, URL: rt.queueURL(qt.Queue), QueueID: "yrn:yc:ymq:ru-central1:local:" + qt.Queue,
		BatchSize: qt.BatchSize, VisibilityTimeout: time.Duration(qt.VisibilityTimeoutSeconds) * time.Second,
		Log: rt.log, Name: qt.Name,
		Invoke: func(ctx context.Context, raw []byte) error {
			_, err := rt.invoke(ctx, qt.Function, fn, raw)
			return err
		},
	})
	if err != nil {
		rt.log.Error("queue trigger not started", "trigger", qt.Name, "error", err)
		return
	}
	tr.Run(ctx)
}

func (rt *runner) queueURL(name string) string {
	c := rt.app.Config.QueueURLs
	switch name {
	case "saga-commands":
		return c.SagaCommands
	case "saga-commands-dlq":
		return c.SagaCommandsDLQ
	case "order-events":
		return c.OrderEvents
	}
	return "sqlitequeue:///" + name
}

// metrics serves the Prometheus exposition (ORDERSAGA_METRICS=prometheus,
// the local runner's default).
func (rt *runner) metrics(w http.ResponseWriter, r *http.Request) {
	if rt.metricsHandler == nil {
		httpapi.WriteError(w, r, apperr.New(apperr.NotFound, "metrics are disabled: set ORDERSAGA_METRICS=prometheus"))
		return
	}
	rt.metricsHandler.ServeHTTP(w, r)
}

// DemoStock is the demo data the local runner seeds (see README): five SKUs
// with stock 100 and one that is out of stock.
var DemoStock = map[string]int64{"sku-1": 100, "sku-2": 100, "sku-3": 100, "sku-4": 100, "sku-5": 100, "sku-out": 0}

// seed loads the demo data; it only sets SKUs that do not exist yet, so
// restarting the runner keeps the stock it has.
func (rt *runner) seed(ctx context.Context) error { return rt.app.Commands.Stock.Seed(ctx, DemoStock) }

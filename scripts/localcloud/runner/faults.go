package runner

// Local-only fault settings, so that every kind of dead letter can be made on
// a laptop (README, "A ten-minute tour"; docs/local-runner.md). They live in
// the local runner and nowhere else: no cloud function reads these variables
// or serves /_faults.
//
//	LOCAL_FAULT_PUBLISH_SKU=sku-4   the embedded queue refuses (transient error) every
//	                                order-events message of an order that contains
//	                                sku-4, so its outbox rows die after
//	                                RELAY_MAX_ATTEMPTS: outbox dead letters
//	LOCAL_FAULT_ADVANCER_SKU=sku-5  every sagaadvancer invocation whose batch holds a
//	                                command of an order that contains sku-5 fails (as
//	                                if the function crashed); the rest of the batch is
//	                                processed first. After max_receive_count receives
//	                                the command moves to saga-commands-dlq: a queue
//	                                dead letter (max_receives_exceeded)
//	LOCAL_VISIBILITY_TIMEOUT=2s     the queue triggers' visibility timeout (and with it
//	                                the advancer's invocation deadline) instead of
//	                                triggers.yaml's 120 s, so five receives take
//	                                seconds, not ten minutes
//
// GET /_faults shows the current faults; PATCH /_faults changes them while
// the runner runs — the fields present change, the others stay:
//
//	{"publish_sku":"", "advancer_sku":"", "payment_failure_rate":1}
//
// payment_failure_rate is the built-in payment provider's share of 503s
// (PAYMENT_FAILURE_RATE at start): 1 is a provider outage.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"ordersaga/shared/adapters/paymentsim"
	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/httpapi"
	"ordersaga/shared/transport/mqtrigger"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
	"ordersaga/shared/wiring/triggers"
)

// Names of the local fault settings.
const (
	envFaultPublishSKU  = "LOCAL_FAULT_PUBLISH_SKU"
	envFaultAdvancerSKU = "LOCAL_FAULT_ADVANCER_SKU"
	envVisibility       = "LOCAL_VISIBILITY_TIMEOUT"
	faultsPath          = "/_faults"
)

// skuRe is the order API's SKU rule (docs/api.md).
var skuRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// faultState is the body of GET and PATCH /_faults.
type faultState struct {
	PublishSKU         string   `json:"publish_sku"`
	AdvancerSKU        string   `json:"advancer_sku"`
	PaymentFailureRate *float64 `json:"payment_failure_rate,omitempty"` // absent: an external provider
}

// faults holds the local fault settings of one runner.
type faults struct {
	store store.Store     // set by decorate
	sim   *paymentsim.Sim // set by attach; nil with an external payment provider
	url   string          // the order-events queue

	mu                      sync.Mutex
	publishSKU, advancerSKU string
}

// newFaults reads the local fault settings and applies the visibility
// override to the queue triggers of tf. A bad setting is an error naming
// the variable, and changes nothing.
func newFaults(cfg config.Config, tf *triggers.File, getenv func(string) string) (*faults, error) {
	f := &faults{url: cfg.QueueURLs.OrderEvents}
	var errs []error
	for _, s := range []struct {
		name string
		dst  *string
	}{{envFaultPublishSKU, &f.publishSKU}, {envFaultAdvancerSKU, &f.advancerSKU}} {
		v := strings.TrimSpace(getenv(s.name))
		if v != "" && !skuRe.MatchString(v) {
			errs = append(errs, fmt.Errorf("%s must be a SKU such as sku-4 (got %q)", s.name, v))
		}
		*s.dst = v
	}
	vis := 0
	if v := strings.TrimSpace(getenv(envVisibility)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > queue.MaxVisibilityTimeout || d%time.Second != 0 {
			errs = append(errs, fmt.Errorf("%s must be whole seconds between 1s and 12h, such as 2s (got %q)", envVisibility, v))
		} else {
			vis = int(d / time.Second)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if vis > 0 {
		for i := range tf.QueueTriggers {
			tf.QueueTriggers[i].VisibilityTimeoutSeconds = vis
		}
	}
	return f, nil
}

// decorate wraps the opened ports: sends to order-events go through the
// publish fault, and the store answers the faults' order look-ups.
func (f *faults) decorate(p app.Ports) app.Ports {
	f.store = p.Store
	p.Queue = &faultQueue{Queue: p.Queue, f: f, url: f.url}
	return p
}

// attach gives the faults the App's built-in payment provider and wraps the
// sagaadvancer function of fns with the advancer fault.
func (f *faults) attach(a *app.App, fns map[string]handlers.Func) {
	f.sim = a.PaymentSimulator()
	if fn, ok := fns["sagaadvancer"]; ok {
		fns["sagaadvancer"] = f.advancer(fn)
	}
	if pub, adv := f.skus(); pub != "" || adv != "" {
		a.Log.Warn("local faults are on", "publish_sku", pub, "advancer_sku", adv)
	}
}

func (f *faults) skus() (publish, advancer string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.publishSKU, f.advancerSKU
}

// orderHas reports whether the order exists and contains sku.
func (f *faults) orderHas(ctx context.Context, orderID, sku string) bool {
	if orderID == "" || sku == "" {
		return false
	}
	found := false
	_ = f.store.View(ctx, func(ctx context.Context, tx store.Tx) error {
		o, err := tx.GetOrder(ctx, orderID)
		if err != nil {
			return err
		}
		for _, it := range o.Items {
			found = found || it.SKU == sku
		}
		return nil
	})
	return found
}

// faultQueue refuses order-events messages of orders with the publish SKU.
type faultQueue struct {
	queue.Queue
	f   *faults
	url string
}

func (q *faultQueue) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	sku, _ := q.f.skus()
	if sku == "" || url != q.url {
		return q.Queue.SendBatch(ctx, url, msgs)
	}
	refused := map[string]bool{}
	var pass []queue.OutMessage
	for _, m := range msgs {
		if q.f.orderHas(ctx, m.Attributes[outbox.AttrOrderID], sku) {
			refused[m.ID] = true
		} else {
			pass = append(pass, m)
		}
	}
	if len(refused) == 0 {
		return q.Queue.SendBatch(ctx, url, msgs)
	}
	sent := map[string]queue.SendResult{}
	if len(pass) > 0 {
		res, err := q.Queue.SendBatch(ctx, url, pass)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			sent[r.ID] = r
		}
	}
	out := make([]queue.SendResult, 0, len(msgs))
	for _, m := range msgs {
		if refused[m.ID] {
			out = append(out, queue.SendResult{ID: m.ID, Err: apperr.New(apperr.Transient,
				"local fault %s=%s: the queue refused this message", envFaultPublishSKU, sku)})
		} else if r, ok := sent[m.ID]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// SendInTx forwards the embedded queue's in-transaction send (the local
// fast path, relay.TxSender), except to order-events while a publish fault
// is set: those go through SendBatch after commit, where the fault applies
// (inside its transaction, the order a POST is creating is not yet visible
// to the fault's look-up).
func (q *faultQueue) SendInTx(ctx context.Context, tx store.Tx, url string, msgs []queue.OutMessage) ([]queue.SendResult, bool, error) {
	ts, ok := q.Queue.(relay.TxSender)
	if sku, _ := q.f.skus(); !ok || (sku != "" && url == q.url) {
		return nil, false, nil
	}
	return ts.SendInTx(ctx, tx, url, msgs)
}

// Committed implements relay.TxSender.
func (q *faultQueue) Committed(urls ...string) {
	if ts, ok := q.Queue.(relay.TxSender); ok {
		ts.Committed(urls...)
	}
}

// DeleteBatch forwards the embedded queue's batch delete (no fault touches
// deletes), so the local trigger acknowledges a batch in one call.
func (q *faultQueue) DeleteBatch(ctx context.Context, url string, handles []string) error {
	if bd, ok := q.Queue.(mqtrigger.BatchDeleter); ok {
		return bd.DeleteBatch(ctx, url, handles)
	}
	var errs []error
	for _, h := range handles {
		errs = append(errs, q.Queue.Delete(ctx, url, h))
	}
	return errors.Join(errs...)
}

// advancer wraps the sagaadvancer function: commands of orders with the
// advancer SKU are held back and the invocation fails, so the whole batch
// returns to the queue, as when the function crashes on a poison message.
func (f *faults) advancer(next handlers.Func) handlers.Func {
	return func(ctx context.Context, a *app.App, raw []byte) (any, error) {
		_, sku := f.skus()
		if sku == "" {
			return next(ctx, a, raw)
		}
		ev, err := yc.DecodeQueue(raw)
		if err != nil {
			return next(ctx, a, raw)
		}
		var keep []yc.QueueMessage
		var held []string
		for _, m := range ev.Messages {
			if f.orderHas(ctx, m.MessageAttributes[outbox.AttrOrderID], sku) {
				held = append(held, m.MessageID)
			} else {
				keep = append(keep, m)
			}
		}
		if len(held) == 0 {
			return next(ctx, a, raw)
		}
		if len(keep) > 0 {
			rest, err := yc.EncodeQueue(keep[0].QueueID, keep)
			if err != nil {
				return nil, err
			}
			if _, err := next(ctx, a, rest); err != nil {
				return nil, err
			}
		}
		return nil, fmt.Errorf("local fault %s=%s: sagaadvancer failed on message(s) %s",
			envFaultAdvancerSKU, sku, strings.Join(held, ", "))
	}
}

func (f *faults) state() faultState {
	publish, adv := f.skus()
	st := faultState{PublishSKU: publish, AdvancerSKU: adv}
	if f.sim != nil {
		r := f.sim.FailureRate()
		st.PaymentFailureRate = &r
	}
	return st
}

// wrap serves GET and PATCH /_faults and passes every other request to next.
func (f *faults) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != faultsPath {
			next.ServeHTTP(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet:
		case http.MethodPatch:
			if err := f.patch(r); err != nil {
				httpapi.WriteError(w, r, apperr.New(apperr.Invalid, "%s", err.Error()))
				return
			}
		default:
			w.Header().Set("Allow", "GET, PATCH")
			httpapi.WriteStatus(w, r, http.StatusMethodNotAllowed, "GET or PATCH "+faultsPath)
			return
		}
		writeFaultsJSON(w, http.StatusOK, f.state())
	})
}

// patch applies the fields present in the body; a bad body changes nothing.
func (f *faults) patch(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("send Content-Type: application/json (got %q)", ct)
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4096))
	if err != nil {
		return err
	}
	var in struct {
		PublishSKU         *string  `json:"publish_sku"`
		AdvancerSKU        *string  `json:"advancer_sku"`
		PaymentFailureRate *float64 `json:"payment_failure_rate"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return fmt.Errorf("want {\"publish_sku\", \"advancer_sku\", \"payment_failure_rate\"}: %v", err)
	}
	for _, s := range []*string{in.PublishSKU, in.AdvancerSKU} {
		if s != nil && *s != "" && !skuRe.MatchString(*s) {
			return fmt.Errorf("%q is not a SKU", *s)
		}
	}
	if p := in.PaymentFailureRate; p != nil {
		if f.sim == nil {
			return errors.New("payment_failure_rate needs the built-in payment provider (PAYMENT_PROVIDER_URL is set)")
		}
		if *p < 0 || *p > 1 {
			return fmt.Errorf("payment_failure_rate must be between 0 and 1 (got %v)", *p)
		}
		f.sim.SetFailureRate(*p)
	}
	f.mu.Lock()
	if in.PublishSKU != nil {
		f.publishSKU = *in.PublishSKU
	}
	if in.AdvancerSKU != nil {
		f.advancerSKU = *in.AdvancerSKU
	}
	f.mu.Unlock()
	return nil
}

func writeFaultsJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

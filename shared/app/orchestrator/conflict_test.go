package orchestrator_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/app/payments"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/resilience"
)

// TestProviderAnsweringConflictForeverIsNeverRetriedAtOnce: a provider that
// answers every charge and refund with 409 (a request with this key is
// still being processed: the outcome is unknown), through the real HTTP
// client, payment policy and ledger. A 409 is not retried inside the call
// (one request per saga attempt), does not open the breaker, and is asked
// again only after the saga's backoff (or the Retry-After, when longer)
// through the queue: no two requests of a saga at once. The saga spends its
// 5 charge attempts and 10 refund attempts, each step holding its last for
// the outage bound (one request per backoff cap); the refund gives up, the
// order's units are released all the same, and the saga ends failed at the
// refund, with a dead letter. Both publish paths, with and without
// Retry-After.
func TestProviderAnsweringConflictForeverIsNeverRetriedAtOnce(t *testing.T) {
	for _, retryAfter := range []string{"", "3"} {
		for _, inTx := range []bool{true, false} {
			t.Run(fmt.Sprintf("retryAfter=%q/inTx=%v", retryAfter, inTx), func(t *testing.T) {
				var w *timedWorld
				srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
					w.call(r.URL.Path)
					if retryAfter != "" {
						rw.Header().Set("Retry-After", retryAfter)
					}
					rw.Header().Set("Content-Type", "application/json")
					rw.WriteHeader(http.StatusConflict)
					_, _ = rw.Write([]byte(`{"error":"a request with this idempotency key is in progress"}`))
				}))
				t.Cleanup(srv.Close)
				w = newTimedWorld(t, inTx, func(w *timedWorld) payments.Provider {
					return must(payments.NewHTTPProvider(payments.HTTPConfig{BaseURL: srv.URL, Client: srv.Client(), Now: w.e.clock.Now}))(t)
				})
				start := w.e.clock.Peek()
				oid, sid := w.place("conflict-1")
				w.runUntil(start.Add(time.Hour), func() bool { return w.e.saga(sid).State.Finished() })

				s, o := w.e.saga(sid), w.e.order(oid)
				count := map[string]int{}
				shortest := map[string]time.Duration{}
				last := map[string]time.Time{}
				for _, c := range w.calls {
					if n := count[c.op]; n > 0 {
						if gap := c.at.Sub(last[c.op]); n == 1 || gap < shortest[c.op] {
							shortest[c.op] = gap
						}
					}
					count[c.op]++
					last[c.op] = c.at
				}
				st := w.e.stockOf("sku-1")
				t.Logf("%d charges (at least %s apart), %d refunds (at least %s apart); saga %s %s after the order; order %s; units reserved %d",
					count[payments.PathCharges], shortest[payments.PathCharges], count[payments.PathRefunds], shortest[payments.PathRefunds],
					s.State, s.FinishedAt.Sub(start), o.Status, st.Reserved)
				// One request per run of the step (a 409 is not retried
				// inside the call): its attempts, then its last attempt
				// held for the outage bound at one run per backoff cap.
				holds := int(orchestrator.DefaultOutageBound / def().Saga.BackoffCap)
				charges, _ := spacing(w.log(sid), saga.StepProcessPayment)
				refunds, _ := spacing(w.log(sid), saga.StepRefundPayment)
				if got := count[payments.PathCharges]; got != charges || got < 5 || got > 5+holds {
					t.Errorf("%d charge requests in %d runs, want one per run, 5 attempts and at most %d holds", got, charges, holds)
				}
				if got := count[payments.PathRefunds]; got != refunds || got < 10 || got > 10+holds {
					t.Errorf("%d refund requests in %d runs, want one per run, 10 attempts and at most %d holds", got, refunds, holds)
				}
				min := time.Second
				if retryAfter != "" {
					min = 3 * time.Second
				}
				for _, op := range []string{payments.PathCharges, payments.PathRefunds} {
					if shortest[op] < min {
						t.Errorf("%s requests %s apart: a 409 was retried at once (want at least %s)", op, shortest[op], min)
					}
				}
				if st := w.policy.Breaker.State(); st != resilience.StateClosed {
					t.Errorf("breaker %s: a 409 is an answer, not a failure of the provider", st)
				}
				if s.State != saga.StateFailed || o.Status != order.StatusFailed {
					t.Fatalf("saga %s, order %s: want failed (the refund's outcome stays unknown)", s.State, o.Status)
				}
				if s.Step != 2 || s.Data.GaveUp == nil || s.Data.GaveUp.Step != 2 {
					t.Errorf("saga failed at step %d (gave up %+v), want process_payment's (2), where a redrive resumes the refund", s.Step, s.Data.GaveUp)
				}
				var dls []dlq.DeadLetter
				w.e.view(func(ctx context.Context, tx store.Tx) error {
					var err error
					dls, _, err = tx.ListDeadLetters(ctx, dlq.Filter{}, dlq.Page{Limit: 10})
					return err
				})
				if len(dls) != 1 || dls[0].SagaID != sid {
					t.Errorf("dead letters %+v, want the saga's one", dls)
				}
				if st.Reserved != 0 || st.Available != 100 {
					t.Errorf("stock %+v after the saga ended: want its unit released (the refund's outcome is unknown, the units are not)", st)
				}
				if w.early > 0 {
					t.Errorf("%d commands arrived before their saga was due", w.early)
				}
			})
		}
	}
}

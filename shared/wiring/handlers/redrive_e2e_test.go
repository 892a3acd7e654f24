package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/transport/yc"
)

// pumpFailing is the trigger with a failing function: the batch is not
// deleted and, to stand in for the visibility timeout, made visible again.
// It returns how many invocations failed.
func (s *suite) pumpFailing() int {
	s.t.Helper()
	ctx := context.Background()
	url := s.app.Config.QueueURLs.SagaCommands
	failed := 0
	for i := 0; i < 50; i++ {
		msgs, err := s.ports.Queue.Receive(ctx, url, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Minute})
		if err != nil {
			s.t.Fatal(err)
		}
		if len(msgs) == 0 {
			return failed
		}
		env := make([]yc.QueueMessage, len(msgs))
		for j, m := range msgs {
			env[j] = yc.QueueMessage{MessageID: m.MessageID, Body: m.Body, MessageAttributes: m.Attributes}
		}
		raw, _ := yc.EncodeQueue("yrn:yc:ymq:ru-central1:test:saga-commands", env)
		if _, err := Registry["sagaadvancer"](ctx, s.app, raw); err == nil {
			for _, m := range msgs {
				_ = s.ports.Queue.Delete(ctx, url, m.ReceiptHandle)
			}
			continue
		}
		failed++
		// The poison step (reserve_inventory) runs inside its save
		// transaction and takes no lease, so its redelivery, made visible
		// at once here, is not kept off the saga.
		for _, m := range msgs {
			_ = s.ports.Queue.ChangeVisibility(ctx, url, m.ReceiptHandle, 0)
		}
	}
	return failed
}

func (s *suite) invoke(fn string, cmd string) map[string]any {
	s.t.Helper()
	res, err := Registry[fn](context.Background(), s.app, []byte(cmd))
	if err != nil {
		s.t.Fatalf("%s: %v", fn, err)
	}
	b, _ := json.Marshal(res)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

func TestPoisonMessageToDLQThenRedriveProcessesItOnce(t *testing.T) {
	// One step per message (MaxChainSteps 1), so the poison step has a message (and a batch)
	// of its own. With step chaining the crash would happen in the batch of
	// the saga's first message, already saved: that message would go to the
	// DLQ too (ResolveFinished resolves it once the saga finished), and the
	// poison step's own command would reach the queue through the relay.
	s := newSuiteWith(t, nil, nil, func(c *orchestrator.AdvancerConfig) { c.MaxChainSteps = 1 })
	broken := true
	injectFaults(s, orchestrator.Faults{
		Fail: func(_ context.Context, at orchestrator.FaultPoint) error {
			step := at.Step
			if broken && step == saga.StepReserveInventory {
				return errors.New("inventory database unreachable (injected)")
			}
			return nil
		},
		// The advancer returns an error for a crash; make this fault one
		// so the function fails and the trigger keeps the message.
		CrashAfter: func(_ context.Context, at orchestrator.FaultPoint) error {
			step := at.Step
			if broken && step == saga.StepReserveInventory {
				return errors.New("function crashed (injected)")
			}
			return nil
		},
	})
	o := s.post("poison-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":1,"unit_price_minor":100}]}`)
	failed := s.pumpFailing()
	if failed < 5 {
		t.Fatalf("the poison message failed %d times, want max_receive_count (5)", failed)
	}
	// It is in the DLQ now; list ingests it into the dead-letter store.
	list := s.invoke("dlqredrive", `{"action":"list","source":"queue"}`)
	items, _ := list["entries"].([]any)
	if len(items) != 1 {
		t.Fatalf("dead letters: %v", list)
	}
	id := items[0].(map[string]any)["id"].(string)
	show := s.invoke("dlqredrive", `{"action":"show","ids":["`+id+`"]}`)
	if !strings.Contains(mustJSON(show), o["id"].(string)) {
		t.Errorf("show lacks the order id (correlation chain): %s", mustJSON(show))
	}

	// Dry run changes nothing.
	dry := s.invoke("dlqredrive", `{"action":"redrive","actor":"ops","ids":["`+id+`"],"dry_run":true}`)
	if dry["redriven"] != float64(0) {
		t.Fatalf("dry run redrove: %v", dry)
	}
	broken = false // the cause is fixed
	rep := s.invoke("dlqredrive", `{"action":"redrive","actor":"ops","ids":["`+id+`"]}`)
	if rep["redriven"] != float64(1) {
		t.Fatalf("redrive: %v", rep)
	}
	s.pump()
	got := s.get("/orders/" + o["id"].(string))
	if got["status"] != "CONFIRMED" {
		t.Fatalf("after redrive the order is %v", got["status"])
	}
	reserved := 0
	for _, h := range history(got) {
		if strings.HasPrefix(h, "reserve_inventory/forward/succeeded") {
			reserved++
		}
	}
	if reserved != 1 {
		t.Errorf("reservation ran %d times: %v", reserved, history(got))
	}
	if st, _ := s.app.Commands.Stock.Get(context.Background(), "sku-1"); st.Available != 99 {
		t.Errorf("stock %+v, want exactly one unit reserved and sold", st)
	}
	// The audit shows who did what (admin only).
	req, _ := http.NewRequest("GET", s.srv.URL+"/admin/audit?limit=10", nil)
	req.Header.Set("Authorization", "Bearer dev-admin")
	audit := mustJSON(s.send(req, 200))
	if !strings.Contains(audit, `"actor":"ops"`) || !strings.Contains(audit, "redrive") {
		t.Errorf("audit lacks the redrive by ops: %s", audit)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRedriveCommandErrorsAreReportsAndChangeNothing(t *testing.T) {
	s := newSuite(t, nil)
	for _, cmd := range []string{
		`not json`, `{"action":"explode"}`, `{"action":"redrive","actor":"ops","max":1e308,"all":true}`,
		`{"action":"redrive","actor":"ops","ids":["nope"]}`, `{"action":"list","extra":1}`, `[]`,
	} {
		res := s.invoke("dlqredrive", cmd)
		e, ok := res["error"].(map[string]any)
		if !ok || e["message"] == "" {
			t.Errorf("%s: no error report: %v", cmd, res)
		}
	}
}

package orchestrator_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// TestErrorTextsAreCutOnCharacterBoundaries: a long step error made of
// multi-byte characters is stored shortened, and still valid UTF-8, in the
// saga and in its step log (a byte cut would split a character there).
func TestErrorTextsAreCutOnCharacterBoundaries(t *testing.T) {
	e := newEnv(t, envOpts{stock: map[string]int64{"sku-1": 10}})
	long := "x" + strings.Repeat("é", 800) // the 1000-byte mark falls inside an é
	e.fault = func(step string, _ saga.Direction) error {
		if step == saga.StepReserveInventory {
			return apperr.New(apperr.Transient, "%s", long)
		}
		return nil
	}
	_, sagaID := e.place(item("sku-1", 1, 100))
	for i := 0; i < 2 && len(e.queue) > 0; i++ {
		d := e.queue[0]
		e.queue = e.queue[1:]
		if _, err := e.adv.Handle(context.Background(), d.msg); err != nil {
			t.Fatal(err)
		}
		e.pump()
	}
	s := e.saga(sagaID)
	if s.LastError == "" || len(s.LastError) > 1000 || !utf8.ValidString(s.LastError) {
		t.Errorf("saga last error: %d bytes, valid UTF-8 %v", len(s.LastError), utf8.ValidString(s.LastError))
	}
	var log []saga.LogEntry
	e.view(func(ctx context.Context, tx store.Tx) (err error) { log, err = tx.ListSagaLog(ctx, sagaID); return err })
	found := false
	for _, l := range log {
		if l.Error != "" {
			found = true
			if len(l.Error) > 1000 || !utf8.ValidString(l.Error) {
				t.Errorf("step log error: %d bytes, valid UTF-8 %v", len(l.Error), utf8.ValidString(l.Error))
			}
		}
	}
	if !found {
		t.Error("no step log line carries the error")
	}
}

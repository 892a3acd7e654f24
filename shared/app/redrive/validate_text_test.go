package redrive

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// TestCommandTextFollowsTheTextRule: a console command whose actor or reason
// holds a character SQS (and so the text rule) refuses is answered with a
// JSON error report naming the field, and changes nothing.
func TestCommandTextFollowsTheTextRule(t *testing.T) {
	f := newFixture(t)
	id := f.addDeadOutbox(t, "ev-1")
	before := f.snapshot(t)
	for _, tc := range []struct{ raw, ptr string }{
		{`{"action":"discard","actor":"ops","ids":["` + id + `"],"reason":"bad \uffff"}`, "/reason"},
		{`{"action":"discard","actor":"ops","ids":["` + id + `"],"reason":"bad ` + "\uFFFE" + `"}`, "/reason"},
		{`{"action":"redrive","actor":"op\ufffe","ids":["` + id + `"]}`, "/actor"},
		{`{"action":"redrive","actor":"ops","filter":{"order_id":"o-\uffff"}}`, "/filter/order_id"},
		{"{\"action\":\"discard\",\"actor\":\"ops\",\"ids\":[\"" + id + "\"],\"reason\":\"\xff\"}", ""}, // invalid UTF-8: the whole document
	} {
		cmd, err := f.svc.DecodeCommand([]byte(tc.raw))
		if err == nil {
			_, err = f.svc.Execute(context.Background(), cmd)
		}
		if apperr.KindOf(err) != apperr.Invalid {
			t.Errorf("%q: err = %v, want Invalid", tc.raw, err)
			continue
		}
		var ptrs []string
		for _, fe := range apperr.Fields(err) {
			ptrs = append(ptrs, fe.Pointer)
		}
		if !slices.Contains(ptrs, tc.ptr) {
			t.Errorf("%q: pointers %v, want %q", tc.raw, ptrs, tc.ptr)
		}
		rep := ErrorReport(err)
		if !rep.Error.NothingChanged {
			t.Errorf("%q: report %+v", tc.raw, rep)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Errorf("report does not encode: %v", err)
		}
	}
	if f.snapshot(t) != before {
		t.Fatal("a refused command changed the database")
	}
}

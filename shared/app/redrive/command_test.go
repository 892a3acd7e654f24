package redrive

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

func manyIDs(n, size int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%q", fmt.Sprintf("id-%0*d", size, i))
	}
	return "[" + strings.Join(ids, ",") + "]"
}

func TestDecodeCommandRejectsHostileInput(t *testing.T) {
	const r = `"action":"redrive","actor":"ops",`
	tests := []struct {
		name string
		raw  string
		kind apperr.Kind
		ptrs []string // each must be reported
	}{
		{"not json", `action=list`, apperr.Invalid, []string{""}},
		{"empty", ``, apperr.Invalid, []string{""}},
		{"array", `[{"action":"list"}]`, apperr.Invalid, []string{""}},
		{"null", `null`, apperr.Invalid, []string{""}},
		{"two objects", `{"action":"list"} {"action":"stats"}`, apperr.Invalid, []string{""}},
		{"truncated", `{"action":"list"`, apperr.Invalid, []string{""}},
		{"no action", `{}`, apperr.Invalid, []string{"/action"}},
		{"unknown action", `{"action":"explode"}`, apperr.Invalid, []string{"/action"}},
		{"action not a string", `{"action":7}`, apperr.Invalid, []string{"/action"}},
		{"null action", `{"action":null}`, apperr.Invalid, []string{"/action"}},
		{"duplicate key", `{"action":"list","action":"purge"}`, apperr.Invalid, []string{"/action"}},
		{"unknown field", `{"action":"list","bogus":1}`, apperr.Invalid, []string{"/bogus"}},
		{"field of another action", `{"action":"stats","ids":["a"]}`, apperr.Invalid, []string{"/ids"}},
		{"unknown source", `{"action":"list","source":"kafka"}`, apperr.Invalid, []string{"/source"}},
		{"max as string", `{` + r + `"all":true,"max":"10"}`, apperr.Invalid, []string{"/max"}},
		{"max 1e308", `{` + r + `"all":true,"max":1e308}`, apperr.Invalid, []string{"/max"}},
		{"max huge", `{` + r + `"all":true,"max":99999999999999999999999}`, apperr.Invalid, []string{"/max"}},
		{"max above limit", `{` + r + `"all":true,"max":1001}`, apperr.Invalid, []string{"/max"}},
		{"max zero", `{` + r + `"all":true,"max":0}`, apperr.Invalid, []string{"/max"}},
		{"max fraction", `{` + r + `"all":true,"max":2.5}`, apperr.Invalid, []string{"/max"}},
		{"rate zero", `{` + r + `"all":true,"rate_per_sec":0}`, apperr.Invalid, []string{"/rate_per_sec"}},
		{"rate infinite", `{` + r + `"all":true,"rate_per_sec":1e999}`, apperr.Invalid, []string{"/rate_per_sec"}},
		{"rate too high", `{` + r + `"all":true,"rate_per_sec":101}`, apperr.Invalid, []string{"/rate_per_sec"}},
		{"redrive everything", `{"action":"redrive","actor":"ops"}`, apperr.Invalid, []string{"/ids"}},
		{"redrive a whole source", `{"action":"redrive","actor":"ops","source":"queue"}`, apperr.Invalid, []string{"/ids"}},
		{"redrive with empty filter", `{"action":"redrive","actor":"ops","filter":{}}`, apperr.Invalid, []string{"/ids"}},
		{"no actor", `{"action":"redrive","all":true}`, apperr.Invalid, []string{"/actor"}},
		{"empty actor", `{"action":"redrive","all":true,"actor":""}`, apperr.Invalid, []string{"/actor"}},
		{"control character in actor", `{"action":"redrive","all":true,"actor":"a\u0000b"}`, apperr.Invalid, []string{"/actor"}},
		{"empty ids", `{` + r + `"ids":[]}`, apperr.Invalid, []string{"/ids"}},
		{"duplicated ids", `{` + r + `"ids":["a","b","a"]}`, apperr.Invalid, []string{"/ids/2"}},
		{"ids of wrong types", `{` + r + `"ids":[1,{"x":2},"ok"]}`, apperr.Invalid, []string{"/ids/0", "/ids/1"}},
		{"ids not a list", `{` + r + `"ids":"abc"}`, apperr.Invalid, []string{"/ids"}},
		{"malformed id", `{` + r + `"ids":["../../etc/passwd"]}`, apperr.Invalid, []string{"/ids/0"}},
		{"too many ids", `{` + r + `"max":1000,"ids":` + manyIDs(1001, 4) + `}`, apperr.Invalid, []string{"/ids"}},
		{"2 MB of ids", `{` + r + `"ids":` + manyIDs(20000, 100) + `}`, apperr.TooLarge, nil},
		{"ids and filter", `{` + r + `"ids":["a"],"filter":{"status":"open"}}`, apperr.Invalid, []string{"/ids"}},
		{"ids and source", `{` + r + `"ids":["a"],"source":"queue"}`, apperr.Invalid, []string{"/source"}},
		{"force with filter", `{` + r + `"all":true,"force":true}`, apperr.Invalid, []string{"/force"}},
		{"redrive flagged by filter", `{` + r + `"filter":{"flagged":true}}`, apperr.Invalid, []string{"/filter/flagged"}},
		{"redrive discarded", `{` + r + `"filter":{"status":"discarded"}}`, apperr.Invalid, []string{"/filter/status"}},
		{"filter not an object", `{"action":"list","filter":[1,2]}`, apperr.Invalid, []string{"/filter"}},
		{"nested junk", `{"action":"list","filter":{"nested":{"deep":[[[{}]]]}}}`, apperr.Invalid, []string{"/filter/nested"}},
		{"very deep junk", `{"action":"list","x":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`, apperr.Invalid, []string{""}},
		{"bad time", `{"action":"list","filter":{"from":"yesterday"}}`, apperr.Invalid, []string{"/filter/from"}},
		{"time range backwards", `{"action":"list","filter":{"from":"2026-03-02T00:00:00Z","to":"2026-03-01T00:00:00Z"}}`, apperr.Invalid, []string{"/filter/to"}},
		{"bad status", `{"action":"list","filter":{"status":"zombie"}}`, apperr.Invalid, []string{"/filter/status"}},
		{"flagged as string", `{"action":"list","filter":{"flagged":"yes"}}`, apperr.Invalid, []string{"/filter/flagged"}},
		{"limit too big", `{"action":"list","limit":5000}`, apperr.Invalid, []string{"/limit"}},
		{"bad cursor", `{"action":"list","cursor":"!!"}`, apperr.Invalid, []string{"/cursor"}},
		{"show two", `{"action":"show","ids":["a","b"]}`, apperr.Invalid, []string{"/ids"}},
		{"show none", `{"action":"show"}`, apperr.Invalid, []string{"/ids"}},
		{"discard without reason", `{"action":"discard","actor":"ops","ids":["a"]}`, apperr.Invalid, []string{"/reason"}},
		{"purge too young", `{"action":"purge","actor":"ops","older_than":"1h"}`, apperr.Invalid, []string{"/older_than"}},
		{"purge without age", `{"action":"purge","actor":"ops"}`, apperr.Invalid, []string{"/older_than"}},
		{"purge bad age", `{"action":"purge","actor":"ops","older_than":"30 days"}`, apperr.Invalid, []string{"/older_than"}},
		{"dry_run as string", `{` + r + `"all":true,"dry_run":"true"}`, apperr.Invalid, []string{"/dry_run"}},
		{"every violation listed", `{"action":"redrive","max":0,"rate_per_sec":-1,"bogus":true}`, apperr.Invalid,
			[]string{"/max", "/rate_per_sec", "/bogus", "/actor", "/ids"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeCommand([]byte(tc.raw))
			if apperr.KindOf(err) != tc.kind {
				t.Fatalf("err = %v, want kind %v", err, tc.kind)
			}
			for _, p := range tc.ptrs {
				if !hasPointer(err, p) {
					t.Errorf("no error at %s; got %v", p, apperr.Fields(err))
				}
			}
			if apperr.Message(err) == "internal error" || apperr.Message(err) == "" {
				t.Errorf("unclear message %q", apperr.Message(err))
			}
		})
	}
}

func TestDecodeCommandAccepts(t *testing.T) {
	yes := true
	tests := []struct {
		raw  string
		want Command
	}{
		{`{"action":"stats"}`, Command{Action: ActionStats}},
		{` {"action":"list","source":"saga","filter":{"status":"open","order_id":"o-1","from":"2026-03-01T00:00:00Z","flagged":true},"limit":20} `,
			Command{Action: ActionList, Source: "saga", Limit: 20, Filter: &CommandFilter{Status: "open", OrderID: "o-1",
				From: "2026-03-01T00:00:00Z", Flagged: &yes}}},
		{`{"action":"show","ids":["dl-1"]}`, Command{Action: ActionShow, IDs: []string{"dl-1"}}},
		{`{"action":"redrive","actor":"ops","ids":["a","b"],"force":true,"rate_per_sec":2.5,"dry_run":true}`,
			Command{Action: ActionRedrive, Actor: "ops", IDs: []string{"a", "b"}, Force: true, RatePerSec: 2.5, DryRun: true}},
		{`{"action":"redrive","actor":"ops","source":"queue","all":true,"max":10}`,
			Command{Action: ActionRedrive, Actor: "ops", Source: "queue", All: true, Max: 10}},
		{`{"action":"redrive","actor":"ops","filter":{"error_type":"transient"},"reason":"provider is back"}`,
			Command{Action: ActionRedrive, Actor: "ops", Filter: &CommandFilter{ErrorType: "transient"}, Reason: "provider is back"}},
		{`{"action":"discard","actor":"ops","ids":["a"],"reason":"test order"}`,
			Command{Action: ActionDiscard, Actor: "ops", IDs: []string{"a"}, Reason: "test order"}},
		{`{"action":"purge","actor":"ops","older_than":"720h","dry_run":true}`,
			Command{Action: ActionPurge, Actor: "ops", OlderThan: "720h", DryRun: true}},
		{`{"action":"ingest","actor":"ops","max":50}`, Command{Action: ActionIngest, Actor: "ops", Max: 50}},
	}
	for _, tc := range tests {
		got, err := DecodeCommand([]byte(tc.raw))
		if err != nil {
			t.Errorf("DecodeCommand(%s): %v (fields %v)", tc.raw, err, apperr.Fields(err))
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("DecodeCommand(%s) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
}

func TestServiceLimitsApplyToCommands(t *testing.T) {
	s := newFixture(t).service(t, func(c *Config) { c.MaxPerCall, c.MaxRate = 5, 1 })
	_, err := s.DecodeCommand([]byte(`{"action":"redrive","actor":"ops","all":true,"max":6,"rate_per_sec":2}`))
	if !hasPointer(err, "/max") || !hasPointer(err, "/rate_per_sec") {
		t.Fatalf("err = %v %v", err, apperr.Fields(err))
	}
}

// TestHostileCommandsChangeNothing drives decode + execute, as the console
// function does, and checks every table (audit included) stays as it was.
func TestHostileCommandsChangeNothing(t *testing.T) {
	f := newFixture(t)
	id := f.addDeadOutbox(t, "ev-1")
	f.addFailedSaga(t, "s-1")
	before := f.snapshot(t)
	for _, raw := range []string{
		`{"action":"redrive","actor":"ops","ids":["` + id + `","unknown-1"]}`,
		`{"action":"discard","actor":"ops","ids":["unknown-2","` + id + `"],"reason":"x"}`,
		`{"action":"show","ids":["unknown-3"]}`,
		`{"action":"redrive","actor":"ops","all":true,"max":1e308}`,
		`{"action":"redrive","actor":"ops","all":true,"max":51}`,
		`{"action":"redrive","actor":"ops","all":"yes"}`,
		`{"action":"nuke","actor":"ops"}`,
		`{"action":"redrive","actor":"ops","ids":[]}`,
		`{"action":"purge","actor":"ops","older_than":"1h"}`,
		`{"action":"redrive","actor":"ops","ids":` + manyIDs(20000, 100) + `}`,
	} {
		cmd, err := f.svc.DecodeCommand([]byte(raw))
		if err == nil {
			_, err = f.svc.Execute(context.Background(), cmd)
		}
		k := apperr.KindOf(err)
		if k != apperr.Invalid && k != apperr.NotFound && k != apperr.TooLarge {
			t.Errorf("%.80s: err = %v, want a refusal", raw, err)
		}
		if rep := ErrorReport(err); !rep.Error.NothingChanged || rep.Error.Message == "" {
			t.Errorf("%.80s: report %+v", raw, rep)
		}
	}
	if f.snapshot(t) != before {
		t.Fatal("a refused command changed the database")
	}
}

func TestExecuteRunsEachAction(t *testing.T) {
	f := newFixture(t)
	id := f.addDeadOutbox(t, "ev-1")
	ctx := context.Background()
	run := func(raw string) any {
		t.Helper()
		cmd, err := f.svc.DecodeCommand([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v %v", raw, err, apperr.Fields(err))
		}
		out, err := f.svc.Execute(ctx, cmd)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("%s: report is not JSON-able: %v", raw, err)
		}
		return out
	}
	if l := run(`{"action":"list","source":"outbox"}`).(ListResult); len(l.Entries) != 1 {
		t.Fatalf("list = %+v", l)
	}
	if d := run(`{"action":"show","ids":["` + id + `"]}`).(Detail); d.Outbox == nil || d.Outbox.Status != "dead" {
		t.Fatalf("show = %+v", d)
	}
	if st := run(`{"action":"stats"}`).(Stats); st.Total != 1 {
		t.Fatalf("stats = %+v", st)
	}
	if r := run(`{"action":"redrive","actor":"ops","source":"outbox","all":true,"dry_run":true}`).(Report); r.WouldRedrive != 1 {
		t.Fatalf("redrive = %+v", r)
	}
	if r := run(`{"action":"ingest","actor":"ops"}`).(IngestReport); r.Ingested != 0 || r.AuditID == "" {
		t.Fatalf("ingest = %+v", r)
	}
	if r := run(`{"action":"discard","actor":"ops","ids":["` + id + `"],"reason":"test"}`).(ChangeReport); r.Changed != 1 {
		t.Fatalf("discard = %+v", r)
	}
	if r := run(`{"action":"purge","actor":"ops","older_than":"24h","dry_run":true}`).(ChangeReport); r.Changed != 0 {
		t.Fatalf("purge = %+v", r)
	}
	if f.get(t, id).Status != dlq.StatusDiscarded {
		t.Fatal("discard did not stick")
	}
}

func TestErrorReportHidesInternals(t *testing.T) {
	rep := ErrorReport(fmt.Errorf("dial tcp 10.0.0.1:2135: secret"))
	if rep.Error.Kind != "internal" || strings.Contains(rep.Error.Message, "secret") || rep.Error.NothingChanged {
		t.Fatalf("report = %+v", rep)
	}
}

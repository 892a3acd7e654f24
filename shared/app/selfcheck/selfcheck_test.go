package selfcheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/selfcheck"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/config"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/localwiring"
	"ordersaga/shared/wiring/triggers"
)

func TestRequested(t *testing.T) {
	for _, tc := range []struct {
		name  string
		event string
		want  bool
	}{
		{"the console command", `{"action":"selfcheck"}`, true},
		{"with spaces and other fields", " {\n \"action\" : \"selfcheck\", \"x\": 1}\n", true},
		{"another dlqredrive command", `{"action":"stats"}`, false},
		{"selfcheck elsewhere in the body", `{"action":"list","note":"selfcheck"}`, false},
		{"a gateway event carrying the word", `{"httpMethod":"POST","body":"{\"action\":\"selfcheck\"}"}`, false},
		{"a trigger batch", `{"messages":[{"details":{"message":{"body":"{\"action\":\"selfcheck\"}"}}}]}`, false},
		{"malformed", `{"action":"selfcheck"`, false},
		{"empty", ``, false},
		{"an array", `[{"action":"selfcheck"}]`, false},
		{"case differs", `{"action":"SelfCheck"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := selfcheck.Requested([]byte(tc.event)); got != tc.want {
				t.Errorf("Requested(%s) = %v, want %v", tc.event, got, tc.want)
			}
		})
	}
}

// newLocalApp builds an App on the local adapters with the queues of
// triggers.yaml, as the local runner does.
func newLocalApp(t *testing.T, mutate func(*config.Config)) *app.App {
	t.Helper()
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "selfcheck.db")
	cfg.QueueSQLite = cfg.SQLitePath
	cfg.LogLevel = "error"
	if mutate != nil {
		mutate(&cfg)
	}
	a, err := app.New(context.Background(), cfg, localwiring.Open, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	tf, err := triggers.Load("../../../triggers/triggers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.EnsureQueues(context.Background(), tf.Queues); err != nil {
		t.Fatal(err)
	}
	return a
}

func line(t *testing.T, r selfcheck.Report, check string) selfcheck.Line {
	t.Helper()
	for _, l := range r.Lines {
		if l.Check == check {
			return l
		}
	}
	t.Fatalf("report has no %s line: %+v", check, r.Lines)
	return selfcheck.Line{}
}

// On the local adapters every line passes, and the report names each
// configured queue, the store read, the clock and the schema.
func TestLocalAppPasses(t *testing.T) {
	a := newLocalApp(t, nil)
	r := a.Queries.SelfCheck.Check(context.Background(), "outboxrelay", "")
	if r.Verdict != selfcheck.Pass {
		t.Fatalf("verdict %s, want PASS: %+v", r.Verdict, r.Lines)
	}
	for _, c := range []string{"config", "store.read", "queue.saga-commands", "queue.saga-commands-dlq", "queue.order-events", "clock.skew", "schema.version"} {
		if l := line(t, r, c); l.Verdict != selfcheck.Pass {
			t.Errorf("%s: %s %s", c, l.Verdict, l.Detail)
		}
	}
	if d := line(t, r, "schema.version").Detail; !strings.Contains(d, "none pending") {
		t.Errorf("schema detail %q", d)
	}
	if r.Action != "selfcheck" || r.Function != "outboxrelay" || r.Code.GoVersion == "" {
		t.Errorf("header %+v", r)
	}
}

// Secrets never appear in the report, in any form; their presence does.
func TestSecretsAreRedacted(t *testing.T) {
	cfg := config.Default()
	cfg.Store, cfg.Queue = config.StoreYDB, config.QueueYMQ
	cfg.YDB = config.YDB{ConnectionString: "grpcs://ydb.example:2135/ru-central1/b1g/etn?token=dsn-secret", Auth: "token", Token: "ydb-token-secret"}
	cfg.YMQ.AccessKeyID, cfg.YMQ.SecretAccessKey = "YCAJEkeyid-secret-part", "ymq-secret-value"
	cfg.AuthTokens = "tok-secret=alice:user"
	cfg.Payment.ProviderURL = "https://user:pass-secret@pay.example/api"
	b, err := json.Marshal(selfcheck.Redact(cfg))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"dsn-secret", "ydb-token-secret", "keyid-secret-part", "ymq-secret-value", "tok-secret", "pass-secret"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("redacted config carries %q: %s", secret, b)
		}
	}
	m := selfcheck.Redact(cfg)
	for _, k := range []string{"YDB_TOKEN", "YMQ_SECRET_ACCESS_KEY", "ORDERSAGA_AUTH_TOKENS"} {
		if m[k] != selfcheck.Redacted {
			t.Errorf("%s = %q, want %q (set, hidden)", k, m[k], selfcheck.Redacted)
		}
	}
	if m["YMQ_ACCESS_KEY_ID"] != "YCAJ…" || !strings.HasPrefix(m["YDB_CONNECTION_STRING"], "grpcs://ydb.example:2135/") {
		t.Errorf("key id %q, dsn %q", m["YMQ_ACCESS_KEY_ID"], m["YDB_CONNECTION_STRING"])
	}
}

// A queue URL that names no queue fails its line with the fix, and the
// report's verdict is FAIL.
func TestMissingQueueFails(t *testing.T) {
	a := newLocalApp(t, func(c *config.Config) { c.QueueURLs.OrderEvents = "sqlitequeue:///no-such-queue" })
	r := a.Queries.SelfCheck.Check(context.Background(), "outboxrelay", "")
	l := line(t, r, "queue.order-events")
	if l.Verdict != selfcheck.Fail || !strings.Contains(l.Detail, "ORDER_EVENTS_QUEUE_URL") || l.Fix == "" {
		t.Errorf("line %+v", l)
	}
	if r.Verdict != selfcheck.Fail {
		t.Errorf("verdict %s, want FAIL", r.Verdict)
	}
	if l := line(t, r, "queue.saga-commands"); l.Verdict != selfcheck.Pass {
		t.Errorf("the other queues fail too: %+v", l)
	}
}

// fakeDB is a database probe whose clock runs offset from the function's
// and advances by rtt per reading, as a real round trip does.
type fakeDB struct {
	clock   *fakeclock.Clock
	offset  time.Duration
	rtt     time.Duration
	pending []string
	err     error
}

func (f fakeDB) ServerTime(context.Context) (time.Time, error) {
	if f.err != nil {
		return time.Time{}, f.err
	}
	f.clock.Advance(f.rtt / 2)
	now := f.clock.Now().Add(f.offset)
	f.clock.Advance(f.rtt / 2)
	return now, nil
}

func (f fakeDB) Schema(context.Context) (selfcheck.Schema, error) {
	if f.err != nil {
		return selfcheck.Schema{}, f.err
	}
	return selfcheck.Schema{Applied: 14, Latest: 14, Pending: f.pending}, nil
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	cfg := config.Default()
	cfg.SQLitePath = filepath.Join(t.TempDir(), "probe.db")
	st, err := localwiring.OpenStore(context.Background(), cfg, app.Env{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func TestClockSkew(t *testing.T) {
	for _, tc := range []struct {
		name   string
		offset time.Duration
		rtt    time.Duration
		want   selfcheck.Verdict
	}{
		{"in step", 0, 20 * time.Millisecond, selfcheck.Pass},
		{"behind within tolerance", -800 * time.Millisecond, 20 * time.Millisecond, selfcheck.Pass},
		{"ahead beyond warn", 2 * time.Second, 20 * time.Millisecond, selfcheck.Warn},
		{"behind beyond fail", -7 * time.Second, 20 * time.Millisecond, selfcheck.Fail},
		// 1.4 s apart, but the read took 1 s: only 0.9 s of it is certain.
		{"skew within the round trip's uncertainty", 1400 * time.Millisecond, time.Second, selfcheck.Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := fakeclock.New(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
			r := selfcheck.Run(context.Background(), selfcheck.Config{Config: config.Default(), Store: openStore(t),
				Database: fakeDB{clock: clk, offset: tc.offset, rtt: tc.rtt}, Now: clk.Now})
			l := line(t, r, "clock.skew")
			if l.Verdict != tc.want {
				t.Errorf("verdict %s (%s), want %s", l.Verdict, l.Detail, tc.want)
			}
			if tc.want != selfcheck.Pass && l.Fix == "" {
				t.Error("no fix")
			}
		})
	}
}

func TestPendingMigrationsFail(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	r := selfcheck.Run(context.Background(), selfcheck.Config{Config: config.Default(), Store: openStore(t),
		Database: fakeDB{clock: clk, pending: []string{"0015_next.sql"}}, Now: clk.Now})
	l := line(t, r, "schema.version")
	if l.Verdict != selfcheck.Fail || !strings.Contains(l.Detail, "0015_next.sql") || !strings.Contains(l.Fix, "scripts/migrate") {
		t.Errorf("line %+v", l)
	}
}

func TestUnreachableDatabaseFailsEachLine(t *testing.T) {
	clk := fakeclock.New(time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC))
	down := apperr.Wrap(apperr.Transient, errors.New("connection refused"), "probe")
	r := selfcheck.Run(context.Background(), selfcheck.Config{Config: config.Default(), Store: failingStore{openStore(t), down},
		Database: fakeDB{clock: clk, err: down}, Now: clk.Now})
	for _, c := range []string{"store.read", "clock.skew", "schema.version"} {
		if l := line(t, r, c); l.Verdict != selfcheck.Fail || !strings.Contains(l.Detail, "connection refused") || l.Fix == "" {
			t.Errorf("%s: %+v", c, l)
		}
	}
	if r.Verdict != selfcheck.Fail {
		t.Errorf("verdict %s", r.Verdict)
	}
}

// failingStore fails every View with err.
type failingStore struct {
	store.Store
	err error
}

func (f failingStore) View(context.Context, func(context.Context, store.Tx) error) error {
	return f.err
}

func TestNoProbeFails(t *testing.T) {
	r := selfcheck.Run(context.Background(), selfcheck.Config{Config: config.Default(), Store: openStore(t)})
	if l := line(t, r, "clock.skew"); l.Verdict != selfcheck.Fail {
		t.Errorf("clock without a probe: %+v", l)
	}
}

// A function whose cold start fails answers a report naming the error.
func TestColdStartFailedReport(t *testing.T) {
	r := selfcheck.ColdStartFailed("orderapi", errors.New("invalid configuration: YDB_CONNECTION_STRING is required"), selfcheck.BuildCode(""), time.Now())
	b, _ := json.Marshal(r)
	for _, want := range []string{`"verdict":"FAIL"`, `"check":"config"`, "YDB_CONNECTION_STRING is required", `"fix":`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report lacks %s: %s", want, b)
		}
	}
}

// A zero CheckTimeout takes DefaultCheckTimeout (the runs above); a
// negative one is a FAIL line naming the field, and no check runs.
func TestRunRefusesANegativeCheckTimeout(t *testing.T) {
	cases := []struct {
		name    string
		timeout time.Duration
		want    string // "" = the checks run
	}{
		{"zero is the default", 0, ""},
		{"negative is refused", -time.Second, "CheckTimeout must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := selfcheck.Run(context.Background(), selfcheck.Config{Config: config.Default(), Store: openStore(t), CheckTimeout: tc.timeout})
			if tc.want == "" {
				if l := line(t, r, "store.read"); l.Verdict != selfcheck.Pass {
					t.Errorf("store.read = %+v, want PASS", l)
				}
				return
			}
			if l := line(t, r, "selfcheck"); l.Verdict != selfcheck.Fail || !strings.Contains(l.Detail, tc.want) {
				t.Errorf("selfcheck line = %+v, want FAIL naming %q", l, tc.want)
			}
		})
	}
}

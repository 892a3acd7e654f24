package ydbstore

import (
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-genproto/protos/Ydb"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store/bucket"
)

// typed builds l and returns the wire value of parameter name.
func typed(t *testing.T, l *paramList, name string) *Ydb.TypedValue {
	t.Helper()
	p, err := l.build()
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	m, err := p.ToYDB()
	if err != nil {
		t.Fatalf("ToYDB: %v", err)
	}
	v, ok := m[name]
	if !ok {
		t.Fatalf("parameter %s not bound (have %v)", name, m)
	}
	return v
}

func isNull(v *Ydb.TypedValue) bool {
	_, ok := v.GetValue().GetValue().(*Ydb.Value_NullFlagValue)
	return ok
}

func TestOptionalTimestamp(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	tests := []struct {
		name      string
		in        time.Time
		null      bool
		micros    uint64
		roundTrip time.Time
	}{
		{"zero is NULL", time.Time{}, true, 0, time.Time{}},
		{"epoch is not zero", time.Unix(0, 0), false, 0, time.Unix(0, 0).UTC()},
		{"nanoseconds truncated, zone dropped", time.Date(2031, 7, 14, 23, 59, 58, 123456789, msk), false,
			uint64(time.Date(2031, 7, 14, 20, 59, 58, 123456000, time.UTC).UnixMicro()),
			time.Date(2031, 7, 14, 20, 59, 58, 123456000, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := typed(t, newParams().optTS("$t", tt.in), "$t")
			if v.GetType().GetOptionalType().GetItem().GetTypeId() != Ydb.Type_TIMESTAMP {
				t.Fatalf("type = %v, want Optional<Timestamp>", v.GetType())
			}
			if isNull(v) != tt.null {
				t.Fatalf("null = %v, want %v (%v)", isNull(v), tt.null, v)
			}
			var back *time.Time
			if !tt.null {
				if got := v.GetValue().GetUint64Value(); got != tt.micros {
					t.Errorf("micros = %d, want %d", got, tt.micros)
				}
				bt := time.UnixMicro(int64(v.GetValue().GetUint64Value()))
				back = &bt
			}
			got := fromTS(back)
			if !got.Equal(tt.roundTrip) || got.Location() != tt.roundTrip.Location() {
				t.Errorf("round trip = %v, want %v", got, tt.roundTrip)
			}
			if want := storedTime(tt.in); !got.Equal(want) {
				t.Errorf("storedTime = %v, read back %v", want, got)
			}
		})
	}
}

func TestTimestampRange(t *testing.T) {
	tests := []struct {
		name string
		l    *paramList
		want apperr.Kind
		ok   bool
	}{
		{"before 1970", newParams().optTS("$t", time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC)), apperr.Invalid, false},
		{"2106 and later", newParams().optTS("$t", time.Date(2106, 1, 1, 0, 0, 0, 0, time.UTC)), apperr.Invalid, false},
		{"last second of 2105", newParams().optTS("$t", time.Date(2105, 12, 31, 23, 59, 59, 0, time.UTC)), 0, true},
		{"required bound zero", newParams().ts("$now", time.Time{}), apperr.Invalid, false},
		{"required bound", newParams().ts("$now", time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.l.build()
			if tt.ok != (err == nil) || (!tt.ok && !apperr.Is(err, tt.want)) {
				t.Errorf("build err = %v (kind %v), want ok=%v kind %v", err, apperr.KindOf(err), tt.ok, tt.want)
			}
		})
	}
}

func TestBytesAndJSON(t *testing.T) {
	if v := typed(t, newParams().bytes("$b", nil), "$b"); !isNull(v) {
		t.Errorf("nil bytes: %v, want NULL", v)
	}
	if v := typed(t, newParams().bytes("$b", []byte{}), "$b"); !isNull(v) {
		t.Errorf("empty bytes: %v, want NULL", v)
	}
	body := []byte{0, 1, '{', 0xff}
	v := typed(t, newParams().bytes("$b", body), "$b")
	if isNull(v) || string(v.GetValue().GetBytesValue()) != string(body) {
		t.Errorf("bytes: %v, want %q verbatim", v, body)
	}
	if v := typed(t, newParams().json("$j", []order.Item(nil)), "$j"); v.GetValue().GetTextValue() != "null" ||
		v.GetType().GetTypeId() != Ydb.Type_JSON {
		t.Errorf("nil list: %v, want Json null", v)
	}
	items := []order.Item{{SKU: "a", Quantity: 2, UnitPriceMinor: 150}}
	j := typed(t, newParams().json("$j", items), "$j").GetValue().GetTextValue()
	var back []order.Item
	if err := fromJSON(j, "items", &back); err != nil || len(back) != 1 || back[0] != items[0] {
		t.Errorf("json round trip: %v %v", back, err)
	}
	var none []order.Item
	if err := fromJSON("", "items", &none); err != nil || none != nil {
		t.Errorf("NULL json: %v %v", none, err)
	}
	if err := fromJSON("{", "items", &none); !apperr.Is(err, apperr.Internal) {
		t.Errorf("bad json: %v", err)
	}
}

func TestRowParams(t *testing.T) {
	// A record with zero times binds NULLs; set times bind values.
	rec := idempotency.Record{Scope: "s", Key: "k", Status: idempotency.StatusCompleted,
		CreatedAt: time.Date(1990, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := idemParams(rec)
	if !isNull(typed(t, l, "$locked_until")) || !isNull(typed(t, l, "$expires_at")) {
		t.Error("zero lock/expiry must bind NULL")
	}
	if isNull(typed(t, l, "$created_at")) || typed(t, l, "$scope").GetValue().GetTextValue() != "s" {
		t.Error("created_at / scope not bound")
	}
	o := order.Order{ID: "o1", Version: 7, Items: nil}
	if got := typed(t, orderParams(o), "$version").GetValue().GetInt64Value(); got != 7 {
		t.Errorf("$version = %d", got)
	}
}

func TestOutboxExpireAt(t *testing.T) {
	pub := time.Date(1990, 5, 1, 0, 0, 0, 0, time.UTC)
	week := 7 * 24 * time.Hour
	tests := []struct {
		name      string
		e         outbox.Event
		retention time.Duration
		want      time.Time
	}{
		{"published", outbox.Event{Status: outbox.StatusPublished, PublishedAt: pub}, week, pub.Add(week)},
		{"pending never expires", outbox.Event{Status: outbox.StatusPending, PublishedAt: pub}, week, time.Time{}},
		{"dead never expires", outbox.Event{Status: outbox.StatusDead}, week, time.Time{}},
		{"published without time", outbox.Event{Status: outbox.StatusPublished}, week, time.Time{}},
		{"retention disabled", outbox.Event{Status: outbox.StatusPublished, PublishedAt: pub}, -1, time.Time{}},
		{"beyond Timestamp range", outbox.Event{Status: outbox.StatusPublished, PublishedAt: maxTimestamp.Add(-time.Hour)}, week, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := outboxExpireAt(tt.e, tt.retention); !got.Equal(tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			v := typed(t, outboxParams(tt.e, tt.retention), "$expire_at")
			if isNull(v) != tt.want.IsZero() {
				t.Errorf("$expire_at = %v", v)
			}
		})
	}
}

func TestCompareStaleIdem(t *testing.T) {
	at := func(s int) time.Time { return time.Unix(int64(s), 0).UTC() }
	recs := []idempotency.Record{
		{Scope: "b", Key: "1", ExpiresAt: at(10)},
		{Scope: "a", Key: "2", ExpiresAt: at(10)},
		{Scope: "z", Key: "9"}, // zero expiry: first
		{Scope: "a", Key: "1", ExpiresAt: at(10)},
		{Scope: "a", Key: "0", ExpiresAt: at(5)},
	}
	want := []string{"z/9", "a/0", "a/1", "a/2", "b/1"}
	for i := range recs {
		for j := range recs {
			ci, cj := indexOf(want, recs[i].Scope+"/"+recs[i].Key), indexOf(want, recs[j].Scope+"/"+recs[j].Key)
			if got := compareStaleIdem(recs[i], recs[j]); sign(got) != sign(ci-cj) {
				t.Errorf("compare(%v, %v) = %d", recs[i], recs[j], got)
			}
		}
	}
}

func indexOf(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}

func sign(n int) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// Every saga and idempotency-key write carries the row's bucket
// (migration 0013), computed from its primary key.
func TestBucketParams(t *testing.T) {
	for _, id := range []string{"a", "saga-1", "saga-2", "x"} {
		ps := sagaParams(saga.Instance{ID: id})
		if got := typed(t, ps, "$bucket").GetValue().GetInt64Value(); got != bucket.Of(id) {
			t.Errorf("saga %s: $bucket = %d, want %d", id, got, bucket.Of(id))
		}
		ps = idemParams(idempotency.Record{Scope: "sc", Key: id})
		if got := typed(t, ps, "$bucket").GetValue().GetInt64Value(); got != bucket.Of("sc", id) {
			t.Errorf("key %s: $bucket = %d, want %d", id, got, bucket.Of("sc", id))
		}
	}
}

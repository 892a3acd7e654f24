package ydbstore

import (
	"encoding/json"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/store"
)

// YDB's Timestamp range: [1970-01-01, 2106-01-01) UTC.
var (
	minTimestamp = time.Unix(0, 0).UTC()
	maxTimestamp = time.Date(2106, 1, 1, 0, 0, 0, 0, time.UTC)
)

// param is one named query parameter. Names include the leading '$' and
// match a DECLARE of the query they are bound to (schema_test.go checks
// every query's DECLAREs against the parameters its method binds).
type param struct {
	name string
	v    types.Value
}

// paramList accumulates a query's parameters; the first encoding error
// sticks and is returned by build, so call sites stay linear.
type paramList struct {
	ps  []param
	err error
}

// newParams starts an empty list.
func newParams() *paramList { return &paramList{} }

func (l *paramList) add(name string, v types.Value) *paramList {
	l.ps = append(l.ps, param{name: name, v: v})
	return l
}

// text binds a Utf8. A value that is not valid UTF-8 is Invalid (see
// store.CheckText): the SDK's proto encoder would refuse it client-side.
func (l *paramList) text(name, v string) *paramList {
	l.check(name, v)
	return l.add(name, types.TextValue(v))
}

// note binds a diagnostic Utf8 (an error text, a reason): invalid UTF-8 is
// repaired (store.RepairText), so a failure can always be recorded.
func (l *paramList) note(name, v string) *paramList {
	return l.add(name, types.TextValue(store.RepairText(v)))
}

// check records Invalid for a text that is not valid UTF-8.
func (l *paramList) check(name, v string) {
	if err := store.CheckText("ydbstore: "+name, v); err != nil {
		l.fail(err)
	}
}

// optText binds an Optional<Utf8>: "" is NULL (used for "no filter").
func (l *paramList) optText(name, v string) *paramList {
	l.check(name, v)
	if v == "" {
		return l.add(name, types.NullValue(types.TypeText))
	}
	return l.add(name, types.OptionalValue(types.TextValue(v)))
}

// int binds an Int64.
func (l *paramList) int(name string, v int64) *paramList { return l.add(name, types.Int64Value(v)) }

// uint binds a Uint64 (LIMIT values).
func (l *paramList) uint(name string, v uint64) *paramList { return l.add(name, types.Uint64Value(v)) }

// bool binds a Bool.
func (l *paramList) bool(name string, v bool) *paramList { return l.add(name, types.BoolValue(v)) }

// optBool binds an Optional<Bool>: nil is NULL.
func (l *paramList) optBool(name string, v *bool) *paramList {
	if v == nil {
		return l.add(name, types.NullValue(types.TypeBool))
	}
	return l.add(name, types.OptionalValue(types.BoolValue(*v)))
}

// bytes binds an Optional<String>: nil and empty are NULL (the store port
// does not distinguish them), anything else the bytes verbatim.
func (l *paramList) bytes(name string, v []byte) *paramList {
	if len(v) == 0 {
		return l.add(name, types.NullValue(types.TypeBytes))
	}
	return l.add(name, types.OptionalValue(types.BytesValue(v)))
}

// json binds a Json holding v encoded with encoding/json (nil slices and
// maps encode as null and decode back to nil).
func (l *paramList) json(name string, v any) *paramList {
	b, err := json.Marshal(v)
	if err != nil {
		l.fail(apperr.Wrap(apperr.Internal, err, "ydbstore: encode %s", name))
		return l.add(name, types.JSONValue("null"))
	}
	return l.add(name, types.JSONValueFromBytes(b))
}

// optJSON binds an Optional<Json>: NULL when null is true, otherwise v
// encoded with encoding/json.
func (l *paramList) optJSON(name string, v any, null bool) *paramList {
	if null {
		return l.add(name, types.NullValue(types.TypeJSON))
	}
	b, err := json.Marshal(v)
	if err != nil {
		l.fail(apperr.Wrap(apperr.Internal, err, "ydbstore: encode %s", name))
		return l.add(name, types.NullValue(types.TypeJSON))
	}
	return l.add(name, types.OptionalValue(types.JSONValueFromBytes(b)))
}

// ts binds a Timestamp that must not be zero (a bound such as $now).
func (l *paramList) ts(name string, t time.Time) *paramList {
	if t.IsZero() {
		l.fail(apperr.New(apperr.Invalid, "ydbstore: %s must not be the zero time", name))
		return l.add(name, types.TimestampValueFromTime(minTimestamp))
	}
	if err := checkTimestamp(name, t); err != nil {
		l.fail(err)
	}
	return l.add(name, types.TimestampValueFromTime(t))
}

// optTS binds an Optional<Timestamp>: the zero time is NULL, any other time
// must lie in YDB's Timestamp range (Invalid otherwise). Sub-microsecond
// precision is truncated by the SDK, as SQLite truncates.
func (l *paramList) optTS(name string, t time.Time) *paramList {
	if t.IsZero() {
		return l.add(name, types.NullValue(types.TypeTimestamp))
	}
	if err := checkTimestamp(name, t); err != nil {
		l.fail(err)
		return l.add(name, types.NullValue(types.TypeTimestamp))
	}
	return l.add(name, types.OptionalValue(types.TimestampValueFromTime(t)))
}

// textList binds a List<Utf8>.
func (l *paramList) textList(name string, vs []string) *paramList {
	items := make([]types.Value, len(vs))
	for i, v := range vs {
		l.check(name, v)
		items[i] = types.TextValue(v)
	}
	if len(items) == 0 {
		return l.add(name, types.ZeroValue(types.List(types.TypeText)))
	}
	return l.add(name, types.ListValue(items...))
}

func (l *paramList) fail(err error) {
	if l.err == nil {
		l.err = err
	}
}

// build returns the parameters for query.WithParameters, built with the
// SDK's ydb.ParamsBuilder, or the first encoding error.
func (l *paramList) build() (ydb.Params, error) {
	if l.err != nil {
		return nil, l.err
	}
	b := ydb.ParamsBuilder()
	for _, p := range l.ps {
		b = b.Param(p.name).Any(p.v)
	}
	return b.Build(), nil
}

// checkTimestamp rejects non-zero times YDB's Timestamp cannot hold.
func checkTimestamp(name string, t time.Time) error {
	if t.Before(minTimestamp) || !t.Before(maxTimestamp) {
		return apperr.New(apperr.Invalid, "ydbstore: %s %s is outside YDB's Timestamp range (1970..2105)",
			name, t.UTC().Format(time.RFC3339))
	}
	return nil
}

// storedTime is what a Timestamp column gives back for t: the zero time, or
// t in UTC truncated to the microsecond.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// fromTS decodes a scanned Optional<Timestamp>: NULL is the zero time,
// anything else is returned in UTC.
func fromTS(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// fromJSON decodes a scanned Json column into dst; NULL (an empty string)
// leaves dst at its zero value.
func fromJSON(s, what string, dst any) error {
	if s == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		return apperr.Wrap(apperr.Internal, err, "ydbstore: decode %s", what)
	}
	return nil
}

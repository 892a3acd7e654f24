package sqlitestore

import (
	"encoding/json"
	"time"

	"ordersaga/shared/domain/apperr"
)

// zeroMicros is how the zero time.Time is stored: its own unix-microsecond
// value. Every other time keeps its natural value, so integer comparison and
// ordering in SQL are exactly time comparison and ordering in Go (the zero
// time is the earliest instant), with no NULL special cases in the queries
// and no collision with the Unix epoch (which storing zero as 0 would have).
var zeroMicros = time.Time{}.UnixMicro()

// tm encodes a time for storage: unix microseconds, truncated.
func tm(t time.Time) int64 {
	if t.IsZero() {
		return zeroMicros
	}
	return t.UnixMicro()
}

// fromTm decodes a stored time: UTC, or the zero time.
func fromTm(v int64) time.Time {
	if v == zeroMicros {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

// boolInt encodes a bool as 0 or 1.
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// toJSON encodes a list or map column. nil encodes as JSON null and decodes
// back to nil, an empty value as [] or {}, so both round-trip exactly.
func toJSON(v any, what string) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", apperr.Wrap(apperr.Internal, err, "sqlitestore: encode %s", what)
	}
	return string(b), nil
}

// fromJSON decodes a column written by toJSON into dst.
func fromJSON(s string, dst any, what string) error {
	if err := json.Unmarshal([]byte(s), dst); err != nil {
		return apperr.Wrap(apperr.Internal, err, "sqlitestore: decode %s", what)
	}
	return nil
}

// rowScanner is *sql.Row or *sql.Rows.
type rowScanner interface {
	Scan(dest ...any) error
}

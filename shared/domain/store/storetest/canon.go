package storetest

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/idempotency"
	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/payment"
	"ordersaga/shared/domain/saga"
)

// What a store gives back for what it was given: every non-zero time in UTC
// truncated to the microsecond, the zero time as the zero time, and empty
// lists, maps and byte slices indistinguishable from nil. The canon*
// functions take a time mapping: stored (what a read must return) for the
// value written, and keep for the value read, so that only empties are
// normalised on the read side and a read time in another zone or with
// nanoseconds still fails the comparison.

// stored is the time a store must return for t.
func stored(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// keep leaves a read time as it is.
func keep(t time.Time) time.Time { return t }

// wantEqual fails the test when got (normalised) differs from want.
func wantEqual[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %s\nwant %s", what, show(got), show(want))
	}
}

func show(v any) string { return fmt.Sprintf("%+v", v) }

func nilBytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

func nilMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func canonOrder(o order.Order, tf func(time.Time) time.Time) order.Order {
	if len(o.Items) == 0 {
		o.Items = nil
	}
	o.CreatedAt, o.UpdatedAt = tf(o.CreatedAt), tf(o.UpdatedAt)
	return o
}

func canonIdem(r idempotency.Record, tf func(time.Time) time.Time) idempotency.Record {
	r.ResponseBody = nilBytes(r.ResponseBody)
	r.LockedUntil, r.CreatedAt, r.ExpiresAt = tf(r.LockedUntil), tf(r.CreatedAt), tf(r.ExpiresAt)
	return r
}

func canonSaga(s saga.Instance, tf func(time.Time) time.Time) saga.Instance {
	if len(s.Data.Items) == 0 {
		s.Data.Items = nil
	}
	s.LeaseUntil, s.NextAttemptAt = tf(s.LeaseUntil), tf(s.NextAttemptAt)
	s.CreatedAt, s.UpdatedAt, s.FinishedAt = tf(s.CreatedAt), tf(s.UpdatedAt), tf(s.FinishedAt)
	return s
}

func canonLog(e saga.LogEntry, tf func(time.Time) time.Time) saga.LogEntry {
	e.At = tf(e.At)
	return e
}

func canonOutbox(e outbox.Event, tf func(time.Time) time.Time) outbox.Event {
	e.Payload, e.Metadata = nilBytes(e.Payload), nilMap(e.Metadata)
	e.NextAttemptAt, e.LeaseUntil = tf(e.NextAttemptAt), tf(e.LeaseUntil)
	e.CreatedAt, e.PublishedAt = tf(e.CreatedAt), tf(e.PublishedAt)
	return e
}

func canonStock(s inventory.Stock, tf func(time.Time) time.Time) inventory.Stock {
	s.UpdatedAt = tf(s.UpdatedAt)
	return s
}

func canonShard(s inventory.Shard, tf func(time.Time) time.Time) inventory.Shard {
	s.UpdatedAt = tf(s.UpdatedAt)
	return s
}

func canonReservation(r inventory.Reservation, tf func(time.Time) time.Time) inventory.Reservation {
	if len(r.Lines) == 0 {
		r.Lines = nil
	}
	if len(r.Takes) == 0 {
		r.Takes = nil // no takes are stored as none
	}
	r.CreatedAt, r.UpdatedAt = tf(r.CreatedAt), tf(r.UpdatedAt)
	return r
}

func canonPayment(e payment.Entry, tf func(time.Time) time.Time) payment.Entry {
	e.CreatedAt = tf(e.CreatedAt)
	return e
}

func canonDeadLetter(d dlq.DeadLetter, tf func(time.Time) time.Time) dlq.DeadLetter {
	d.Payload, d.Attrs = nilBytes(d.Payload), nilMap(d.Attrs)
	if len(d.History) == 0 {
		d.History = nil
	} else {
		h := make([]dlq.Failure, len(d.History))
		for i, f := range d.History {
			f.At = tf(f.At)
			h[i] = f
		}
		d.History = h
	}
	d.FirstFailedAt, d.LastFailedAt, d.ResolvedAt = tf(d.FirstFailedAt), tf(d.LastFailedAt), tf(d.ResolvedAt)
	d.CreatedAt, d.UpdatedAt = tf(d.CreatedAt), tf(d.UpdatedAt)
	return d
}

func canonAudit(a dlq.AuditRecord, tf func(time.Time) time.Time) dlq.AuditRecord {
	a.Params, a.Detail = nilBytes(a.Params), nilBytes(a.Detail)
	a.At = tf(a.At)
	return a
}

// odd is a time with nanoseconds in a non-UTC zone: a store must return it in
// UTC, truncated to the microsecond.
var odd = time.Date(2031, 7, 14, 23, 59, 58, 123456789, time.FixedZone("MSK", 3*3600))

// epoch is the Unix epoch, which a store must not confuse with the zero time.
var epoch = time.Unix(0, 0).UTC()

package ydbstore

import (
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/outbox"
)

// Row encoding of the outbox table; its queries are in outbox.go.

// outboxExpireAt is the TTL expiry of e: PublishedAt + retention for a
// published row, zero (NULL: keep) for any other row or when retention is
// negative.
func outboxExpireAt(e outbox.Event, retention time.Duration) time.Time {
	if e.Status != outbox.StatusPublished || e.PublishedAt.IsZero() || retention < 0 {
		return time.Time{}
	}
	exp := e.PublishedAt.Add(retention)
	if !exp.Before(maxTimestamp) {
		return time.Time{}
	}
	return exp
}

func outboxDueParams(shard int, now time.Time, limit int) *paramList {
	return newParams().
		text("$pending", string(outbox.StatusPending)).
		int("$shard", int64(shard)).
		ts("$now", now).
		uint("$limit", uint64(limit))
}

// outboxParams binds every column of e plus its TTL expiry (outboxDeclares).
func outboxParams(e outbox.Event, retention time.Duration) *paramList {
	return newParams().
		text("$id", e.ID).
		int("$shard", int64(e.Shard)).
		text("$aggregate_type", e.AggregateType).
		text("$aggregate_id", e.AggregateID).
		text("$event_type", e.EventType).
		text("$destination", e.Destination).
		bytes("$payload", e.Payload).
		json("$metadata", e.Metadata).
		text("$status", string(e.Status)).
		int("$attempts", int64(e.Attempts)).
		optTS("$next_attempt_at", e.NextAttemptAt).
		text("$lease_owner", e.LeaseOwner).
		optTS("$lease_until", e.LeaseUntil).
		note("$last_error", e.LastError).
		optTS("$created_at", e.CreatedAt).
		optTS("$published_at", e.PublishedAt).
		int("$version", e.Version).
		optTS("$expire_at", outboxExpireAt(e, retention))
}

func scanOutbox(r query.Row) (outbox.Event, error) {
	var (
		e                               outbox.Event
		meta, status                    string
		shard, attempts                 int64
		next, lease, created, published *time.Time
	)
	if err := r.ScanNamed(
		query.Named("id", &e.ID),
		query.Named("shard", &shard),
		query.Named("aggregate_type", &e.AggregateType),
		query.Named("aggregate_id", &e.AggregateID),
		query.Named("event_type", &e.EventType),
		query.Named("destination", &e.Destination),
		query.Named("payload", &e.Payload),
		query.Named("metadata", &meta),
		query.Named("status", &status),
		query.Named("attempts", &attempts),
		query.Named("next_attempt_at", &next),
		query.Named("lease_owner", &e.LeaseOwner),
		query.Named("lease_until", &lease),
		query.Named("last_error", &e.LastError),
		query.Named("created_at", &created),
		query.Named("published_at", &published),
		query.Named("version", &e.Version),
	); err != nil {
		return outbox.Event{}, err
	}
	e.Shard, e.Attempts, e.Status = int(shard), int(attempts), outbox.Status(status)
	e.NextAttemptAt, e.LeaseUntil = fromTS(next), fromTS(lease)
	e.CreatedAt, e.PublishedAt = fromTS(created), fromTS(published)
	return e, fromJSON(meta, "outbox metadata", &e.Metadata)
}

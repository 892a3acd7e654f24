package ydbstore

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"
	"github.com/ydb-platform/ydb-go-sdk/v3/table/types"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

// deadLetterParams binds every column of d (deadLetterDeclares).
func deadLetterParams(d dlq.DeadLetter) *paramList {
	// Failure times travel inside JSON; store them like every other time
	// (UTC, microseconds) so they come back the same way.
	history := d.History
	if len(history) > 0 {
		history = make([]dlq.Failure, len(d.History))
		for i, f := range d.History {
			f.At = storedTime(f.At)
			history[i] = f
		}
	}
	return newParams().
		text("$id", d.ID).
		text("$col_source", string(d.Source)).
		text("$source_ref", d.SourceRef).
		text("$col_queue", d.Queue).
		bytes("$payload", d.Payload).
		json("$attrs", d.Attrs).
		text("$error_type", d.ErrorType).
		note("$col_error", d.Error).
		int("$retry_count", int64(d.RetryCount)).
		optTS("$first_failed_at", d.FirstFailedAt).
		optTS("$last_failed_at", d.LastFailedAt).
		json("$history", history).
		text("$status", string(d.Status)).
		int("$redrive_count", int64(d.RedriveCount)).
		bool("$flagged", d.Flagged).
		optTS("$resolved_at", d.ResolvedAt).
		text("$resolved_by", d.ResolvedBy).
		text("$idempotency_key", d.IdempotencyKey).
		text("$order_id", d.OrderID).
		text("$outbox_event_id", d.OutboxEventID).
		text("$saga_id", d.SagaID).
		optTS("$created_at", d.CreatedAt).
		optTS("$updated_at", d.UpdatedAt).
		int("$version", d.Version)
}

func scanDeadLetter(r query.Row) (dlq.DeadLetter, error) {
	var (
		d                                       dlq.DeadLetter
		source, attrs, hist, status             string
		retries, redrives                       int64
		first, last, resolved, created, updated *time.Time
	)
	if err := r.ScanNamed(
		query.Named("id", &d.ID),
		query.Named("source", &source),
		query.Named("source_ref", &d.SourceRef),
		query.Named("queue", &d.Queue),
		query.Named("payload", &d.Payload),
		query.Named("attrs", &attrs),
		query.Named("error_type", &d.ErrorType),
		query.Named("error", &d.Error),
		query.Named("retry_count", &retries),
		query.Named("first_failed_at", &first),
		query.Named("last_failed_at", &last),
		query.Named("history", &hist),
		query.Named("status", &status),
		query.Named("redrive_count", &redrives),
		query.Named("flagged", &d.Flagged),
		query.Named("resolved_at", &resolved),
		query.Named("resolved_by", &d.ResolvedBy),
		query.Named("idempotency_key", &d.IdempotencyKey),
		query.Named("order_id", &d.OrderID),
		query.Named("outbox_event_id", &d.OutboxEventID),
		query.Named("saga_id", &d.SagaID),
		query.Named("created_at", &created),
		query.Named("updated_at", &updated),
		query.Named("version", &d.Version),
	); err != nil {
		return dlq.DeadLetter{}, err
	}
	d.Source, d.Status = dlq.Source(source), dlq.Status(status)
	d.RetryCount, d.RedriveCount = int(retries), int(redrives)
	d.FirstFailedAt, d.LastFailedAt, d.ResolvedAt = fromTS(first), fromTS(last), fromTS(resolved)
	d.CreatedAt, d.UpdatedAt = fromTS(created), fromTS(updated)
	if err := fromJSON(attrs, "dead letter attrs", &d.Attrs); err != nil {
		return dlq.DeadLetter{}, err
	}
	return d, fromJSON(hist, "dead letter history", &d.History)
}

// zeroMicros is how a cursor encodes the zero LastFailedAt: its own
// unix-microsecond value, as sqlitestore does, so cursors look alike.
var zeroMicros = time.Time{}.UnixMicro()

// encodeCursor returns the page cursor after the entry (at, id).
func encodeCursor(at time.Time, id string) string {
	micros := zeroMicros
	if !at.IsZero() {
		micros = at.UnixMicro()
	}
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(micros, 10) + ":" + id))
}

// decodeCursor parses a cursor of encodeCursor; Invalid if malformed.
func decodeCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if at, id, ok := strings.Cut(string(b), ":"); ok {
			if v, perr := strconv.ParseInt(at, 10, 64); perr == nil {
				if v == zeroMicros {
					return time.Time{}, id, nil
				}
				return time.UnixMicro(v).UTC(), id, nil
			}
		}
	}
	return time.Time{}, "", apperr.New(apperr.Invalid, "invalid page cursor")
}

// optionalText is a non-NULL Optional<Utf8> (even for "").
func optionalText(s string) types.Value { return types.OptionalValue(types.TextValue(s)) }

package ydbstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store/bucket"
)

// Tables sagas and saga_log (schema/ydb/0003_sagas.sql).

const sagaColumns = "id, `type`, state, `data`, step, attempts, lease_owner, lease_until, " +
	"next_attempt_at, last_error, correlation_id, created_at, updated_at, finished_at, version"

const sagaDeclares = `
DECLARE $id AS Utf8;
DECLARE $col_type AS Utf8;
DECLARE $state AS Utf8;
DECLARE $col_data AS Json;
DECLARE $step AS Int64;
DECLARE $attempts AS Int64;
DECLARE $lease_owner AS Utf8;
DECLARE $lease_until AS Optional<Timestamp>;
DECLARE $next_attempt_at AS Optional<Timestamp>;
DECLARE $last_error AS Utf8;
DECLARE $correlation_id AS Utf8;
DECLARE $created_at AS Optional<Timestamp>;
DECLARE $updated_at AS Optional<Timestamp>;
DECLARE $finished_at AS Optional<Timestamp>;
DECLARE $version AS Int64;
DECLARE $bucket AS Int64;
`

const sagaValues = `($id, $col_type, $state, $col_data, $step, $attempts, $lease_owner, $lease_until,
	$next_attempt_at, $last_error, $correlation_id, $created_at, $updated_at, $finished_at, $version,
	$bucket)`

// sagaWriteColumns are the columns every INSERT and UPSERT writes: all of
// them, with bucket (migration 0013), which no read selects.
const sagaWriteColumns = sagaColumns + ", bucket"

const sagaLogColumns = "saga_id, seq, step, direction, outcome, attempt, `error`, state_after, " +
	"duration_ms, `at`, message_id"

const (
	yqlInsertSaga = sagaDeclares + `
INSERT INTO sagas (` + sagaWriteColumns + `)
VALUES ` + sagaValues + `;`

	yqlUpsertSaga = sagaDeclares + `
UPSERT INTO sagas (` + sagaWriteColumns + `)
VALUES ` + sagaValues + `;`

	yqlGetSaga = `
DECLARE $id AS Utf8;
SELECT ` + sagaColumns + ` FROM sagas WHERE id = $id;`

	yqlSagaVersion = `
DECLARE $id AS Utf8;
SELECT version FROM sagas WHERE id = $id;`

	yqlSagaLogExists = `
DECLARE $saga_id AS Utf8;
DECLARE $seq AS Int64;
SELECT seq FROM saga_log WHERE saga_id = $saga_id AND seq = $seq;`

	yqlAppendSagaLog = `
DECLARE $saga_id AS Utf8;
DECLARE $seq AS Int64;
DECLARE $step AS Utf8;
DECLARE $direction AS Utf8;
DECLARE $outcome AS Utf8;
DECLARE $attempt AS Int64;
DECLARE $col_error AS Utf8;
DECLARE $state_after AS Utf8;
DECLARE $duration_ms AS Int64;
DECLARE $col_at AS Optional<Timestamp>;
DECLARE $message_id AS Utf8;
INSERT INTO saga_log (` + sagaLogColumns + `)
VALUES ($saga_id, $seq, $step, $direction, $outcome, $attempt, $col_error, $state_after,
	$duration_ms, $col_at, $message_id);`

	// A primary-key prefix read, in key (seq) order.
	yqlListSagaLog = `
DECLARE $saga_id AS Utf8;
SELECT ` + sagaLogColumns + ` FROM saga_log WHERE saga_id = $saga_id ORDER BY seq;`
)

// The saga lists, built once from fixed fragments
// by bucketed (buckets.go): one LIMITed branch per bucket (and the NULL
// bucket of rows written before migration 0013) and key range, each read
// in the index's order, so it stops after LIMIT matching rows. The adapter
// merges the branches and keeps the first LIMIT.
var (
	// Recovery's due list, idx_bucket_state_next: per bucket and
	// unfinished state, a NULL next attempt (the zero time: due; a point
	// prefix, read in id order) and next_attempt_at <= $now (a range
	// without NULL). The lease condition is the only filter not in the key
	// (a branch reads at most LIMIT plus the due sagas leased right now).
	qListSagasDue = bucketed(`
DECLARE $pending AS Utf8;
DECLARE $running AS Utf8;
DECLARE $compensating AS Utf8;
DECLARE $now AS Timestamp;
DECLARE $limit AS Uint64;
`, sagaDueBranches())

	// One state, newest update first, ties by larger id: the reverse of
	// idx_bucket_state_updated's order within a (bucket, state) prefix,
	// read with LIMIT (the reconciler reads at most LIMIT sagas per state
	// and bucket, never every completed one). Updated before a time: the
	// range updated_at < $updated_before (which holds no NULL) plus the
	// NULL point prefix (a NULL updated_at is the zero time, before any
	// bound), NULLs merged last. Without a bound: the range updated_at >=
	// the epoch (every non-NULL) plus the NULL prefix.
	qListSagasByStateBefore = bucketed(`
DECLARE $state AS Utf8;
DECLARE $updated_before AS Timestamp;
DECLARE $limit AS Uint64;
`, sagaByStateBranches("updated_at < $updated_before"))

	// Sagas of one state updated since a time, counted from
	// idx_bucket_state_updated's key alone (id is in it): per bucket the
	// range updated_at >= $since (no NULL), LIMIT-bounded.
	qCountSagasSince = bucketed(`
DECLARE $state AS Utf8;
DECLARE $since AS Timestamp;
DECLARE $limit AS Uint64;
`, []string{"SELECT id FROM sagas VIEW idx_bucket_state_updated\n" +
		"WHERE " + bucketCond + " AND state = $state AND updated_at >= $since\n" +
		"ORDER BY updated_at DESC, id DESC LIMIT $limit"})

	qListSagasByState = bucketed(`
DECLARE $state AS Utf8;
DECLARE $epoch AS Timestamp;
DECLARE $limit AS Uint64;
`, sagaByStateBranches("updated_at >= $epoch"))
)

func sagaDueBranches() []string {
	var out []string
	for _, st := range []string{"$pending", "$running", "$compensating"} {
		out = append(out,
			"SELECT "+sagaColumns+" FROM sagas VIEW idx_bucket_state_next\n"+
				"WHERE "+bucketCond+" AND state = "+st+" AND next_attempt_at IS NULL AND (lease_until IS NULL OR lease_until <= $now)\n"+
				"ORDER BY id LIMIT $limit",
			"SELECT "+sagaColumns+" FROM sagas VIEW idx_bucket_state_next\n"+
				"WHERE "+bucketCond+" AND state = "+st+" AND next_attempt_at <= $now AND (lease_until IS NULL OR lease_until <= $now)\n"+
				"ORDER BY next_attempt_at, id LIMIT $limit")
	}
	return out
}

func sagaByStateBranches(dated string) []string {
	return []string{
		"SELECT " + sagaColumns + " FROM sagas VIEW idx_bucket_state_updated\n" +
			"WHERE " + bucketCond + " AND state = $state AND " + dated + "\n" +
			"ORDER BY updated_at DESC, id DESC LIMIT $limit",
		"SELECT " + sagaColumns + " FROM sagas VIEW idx_bucket_state_updated\n" +
			"WHERE " + bucketCond + " AND state = $state AND updated_at IS NULL\n" +
			"ORDER BY id DESC LIMIT $limit",
	}
}

// InsertSaga implements store.SagaRows; Conflict if the id exists.
func (t *tx) InsertSaga(ctx context.Context, s saga.Instance) error {
	return t.insert(ctx, rowKey("sagas", s.ID), "saga "+quoted(s.ID), s.Version, yqlSagaVersion, idParam(s.ID), yqlInsertSaga, sagaParams(s))
}

// GetSaga implements store.SagaRows; NotFound if missing.
func (t *tx) GetSaga(ctx context.Context, id string) (saga.Instance, error) {
	var s saga.Instance
	err := t.get(ctx, "saga "+quoted(id), yqlGetSaga, idParam(id), func(r query.Row) (err error) {
		s, err = scanSaga(r)
		return err
	})
	t.sawGet(rowKey("sagas", id), err, s.Version)
	return s, err
}

// UpdateSaga implements store.SagaRows: it stores s (with s.Version as given)
// if the stored version is expectedVersion; Conflict if not, NotFound if missing.
func (t *tx) UpdateSaga(ctx context.Context, s saga.Instance, expectedVersion int64) error {
	return t.updateVersioned(ctx, rowKey("sagas", s.ID), "saga "+quoted(s.ID), expectedVersion, s.Version,
		yqlSagaVersion, idParam(s.ID), yqlUpsertSaga, sagaParams(s))
}

// ListSagasDue implements store.SagaRows. limit <= 0 returns nothing.
func (t *tx) ListSagasDue(ctx context.Context, now time.Time, limit int) ([]saga.Instance, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := t.listSagas(ctx, "list due sagas", qListSagasDue, sagasDueParams(now, limit))
	slices.SortFunc(out, func(a, b saga.Instance) int {
		if c := a.NextAttemptAt.Compare(b.NextAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out[:min(len(out), limit)], err
}

// ListSagasByState implements store.SagaRows. limit <= 0 returns nothing.
func (t *tx) ListSagasByState(ctx context.Context, st saga.State, updatedBefore time.Time, limit int) ([]saga.Instance, error) {
	if limit <= 0 {
		return nil, nil
	}
	yql, ps := qListSagasByState, newParams().text("$state", string(st)).ts("$epoch", time.Unix(0, 0))
	if !updatedBefore.IsZero() {
		yql, ps = qListSagasByStateBefore, newParams().text("$state", string(st)).ts("$updated_before", updatedBefore)
	}
	out, err := t.listSagas(ctx, "list sagas by state", yql, ps.uint("$limit", uint64(limit)))
	// Newest update first, the zero time last; ties by larger id.
	slices.SortFunc(out, func(a, b saga.Instance) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out[:min(len(out), limit)], err
}

// CountSagasUpdatedSince implements store.SagaRows: every bucket's newest
// limit index entries at most, the total capped at limit.
func (t *tx) CountSagasUpdatedSince(ctx context.Context, st saga.State, since time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	n := 0
	err := t.rows(ctx, "count sagas by state", qCountSagasSince,
		newParams().text("$state", string(st)).ts("$since", since).uint("$limit", uint64(limit)),
		func(query.Row) error { n++; return nil })
	return min(n, limit), err
}

func (t *tx) listSagas(ctx context.Context, what, yql string, ps *paramList) ([]saga.Instance, error) {
	var out []saga.Instance
	err := t.rows(ctx, what, yql, ps, func(r query.Row) error {
		s, err := scanSaga(r)
		out = append(out, s)
		return err
	})
	return out, err
}

// AppendSagaLog implements store.SagaRows; Conflict if (saga, seq) exists.
func (t *tx) AppendSagaLog(ctx context.Context, e saga.LogEntry) error {
	return t.insert(ctx, rowKey("saga_log", e.SagaID, strconv.Itoa(e.Seq)), "saga log entry", 0, yqlSagaLogExists,
		newParams().text("$saga_id", e.SagaID).int("$seq", int64(e.Seq)), yqlAppendSagaLog, sagaLogParams(e))
}

// ListSagaLog implements store.SagaRows: the log in seq order (empty, not
// NotFound, for an unknown saga).
func (t *tx) ListSagaLog(ctx context.Context, sagaID string) ([]saga.LogEntry, error) {
	var out []saga.LogEntry
	err := t.rows(ctx, "list saga log", yqlListSagaLog, newParams().text("$saga_id", sagaID),
		func(r query.Row) error {
			e, err := scanSagaLog(r)
			out = append(out, e)
			return err
		})
	return out, err
}

func sagasDueParams(now time.Time, limit int) *paramList {
	return newParams().
		text("$pending", string(saga.StatePending)).
		text("$running", string(saga.StateRunning)).
		text("$compensating", string(saga.StateCompensating)).
		ts("$now", now).
		uint("$limit", uint64(limit))
}

// sagaParams binds every column of s (sagaDeclares).
func sagaParams(s saga.Instance) *paramList {
	return newParams().
		text("$id", s.ID).
		text("$col_type", s.Type).
		text("$state", string(s.State)).
		json("$col_data", s.Data).
		int("$step", int64(s.Step)).
		int("$attempts", int64(s.Attempts)).
		text("$lease_owner", s.LeaseOwner).
		optTS("$lease_until", s.LeaseUntil).
		optTS("$next_attempt_at", s.NextAttemptAt).
		note("$last_error", s.LastError).
		text("$correlation_id", s.CorrelationID).
		optTS("$created_at", s.CreatedAt).
		optTS("$updated_at", s.UpdatedAt).
		optTS("$finished_at", s.FinishedAt).
		int("$version", s.Version).
		int("$bucket", bucket.Of(s.ID))
}

func sagaLogParams(e saga.LogEntry) *paramList {
	return newParams().
		text("$saga_id", e.SagaID).
		int("$seq", int64(e.Seq)).
		text("$step", e.Step).
		text("$direction", string(e.Direction)).
		text("$outcome", string(e.Outcome)).
		int("$attempt", int64(e.Attempt)).
		note("$col_error", e.Error).
		text("$state_after", string(e.StateAfter)).
		int("$duration_ms", e.DurationMS).
		optTS("$col_at", e.At).
		text("$message_id", e.MessageID)
}

func scanSaga(r query.Row) (saga.Instance, error) {
	var (
		s                                   saga.Instance
		state, data                         string
		step, attempts                      int64
		lease, next, created, upd, finished *time.Time
	)
	if err := r.ScanNamed(
		query.Named("id", &s.ID),
		query.Named("type", &s.Type),
		query.Named("state", &state),
		query.Named("data", &data),
		query.Named("step", &step),
		query.Named("attempts", &attempts),
		query.Named("lease_owner", &s.LeaseOwner),
		query.Named("lease_until", &lease),
		query.Named("next_attempt_at", &next),
		query.Named("last_error", &s.LastError),
		query.Named("correlation_id", &s.CorrelationID),
		query.Named("created_at", &created),
		query.Named("updated_at", &upd),
		query.Named("finished_at", &finished),
		query.Named("version", &s.Version),
	); err != nil {
		return saga.Instance{}, err
	}
	s.State, s.Step, s.Attempts = saga.State(state), int(step), int(attempts)
	s.LeaseUntil, s.NextAttemptAt = fromTS(lease), fromTS(next)
	s.CreatedAt, s.UpdatedAt, s.FinishedAt = fromTS(created), fromTS(upd), fromTS(finished)
	return s, fromJSON(data, "saga data", &s.Data)
}

func scanSagaLog(r query.Row) (saga.LogEntry, error) {
	var (
		e                        saga.LogEntry
		dir, outcome, stateAfter string
		seq, attempt             int64
		at                       *time.Time
	)
	if err := r.ScanNamed(
		query.Named("saga_id", &e.SagaID),
		query.Named("seq", &seq),
		query.Named("step", &e.Step),
		query.Named("direction", &dir),
		query.Named("outcome", &outcome),
		query.Named("attempt", &attempt),
		query.Named("error", &e.Error),
		query.Named("state_after", &stateAfter),
		query.Named("duration_ms", &e.DurationMS),
		query.Named("at", &at),
		query.Named("message_id", &e.MessageID),
	); err != nil {
		return saga.LogEntry{}, err
	}
	e.Seq, e.Attempt = int(seq), int(attempt)
	e.Direction, e.Outcome, e.StateAfter = saga.Direction(dir), saga.Outcome(outcome), saga.State(stateAfter)
	e.At = fromTS(at)
	return e, nil
}

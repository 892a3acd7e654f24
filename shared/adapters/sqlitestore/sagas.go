package sqlitestore

import (
	"context"
	"time"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store/bucket"
)

const sagaColumns = `id, type, state, data, step, attempts, lease_owner, lease_until, next_attempt_at,
	last_error, correlation_id, created_at, updated_at, finished_at, version`

const (
	// bucket: the YDB twin's column (schema/sqlite/0011_buckets.sql), a
	// function of the id, so the UPDATE never changes it.
	sqlInsertSaga = `INSERT INTO sagas (` + sagaColumns + `, bucket)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlGetSaga    = `SELECT ` + sagaColumns + ` FROM sagas WHERE id = ?`
	sqlUpdateSaga = `UPDATE sagas SET type = ?, state = ?, data = ?, step = ?, attempts = ?,
	lease_owner = ?, lease_until = ?, next_attempt_at = ?, last_error = ?, correlation_id = ?,
	created_at = ?, updated_at = ?, finished_at = ?, version = ?
	WHERE id = ? AND version = ?`
	sqlSagaExists = `SELECT 1 FROM sagas WHERE id = ?`
	// Unfinished, lease free (lease_until <= now) and due.
	sqlListSagasDue = `SELECT ` + sagaColumns + ` FROM sagas
	WHERE state IN (?, ?, ?) AND next_attempt_at <= ? AND lease_until <= ?
	ORDER BY next_attempt_at, id LIMIT ?`
	sqlListSagasByState = `SELECT ` + sagaColumns + ` FROM sagas
	WHERE state = ? AND updated_at < ?
	ORDER BY updated_at DESC, id DESC LIMIT ?`
	sqlCountSagasSince = `SELECT COUNT(*) FROM (SELECT 1 FROM sagas
	WHERE state = ? AND updated_at >= ? LIMIT ?)`
	sqlAppendSagaLog = `INSERT INTO saga_log (saga_id, seq, step, direction, outcome, attempt, error,
	state_after, duration_ms, at, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlListSagaLog = `SELECT saga_id, seq, step, direction, outcome, attempt, error, state_after,
	duration_ms, at, message_id FROM saga_log WHERE saga_id = ? ORDER BY seq`
)

// maxMicros is the largest storable time, used for "no upper bound".
const maxMicros = int64(1<<63 - 1)

// InsertSaga implements store.SagaRows; Conflict if the id exists.
func (t *tx) InsertSaga(ctx context.Context, s saga.Instance) error {
	data, err := toJSON(s.Data, "saga data")
	if err != nil {
		return err
	}
	return t.insert(ctx, "saga "+quoted(s.ID), sqlInsertSaga,
		s.ID, s.Type, string(s.State), data, s.Step, s.Attempts, s.LeaseOwner, tm(s.LeaseUntil),
		tm(s.NextAttemptAt), note(s.LastError), s.CorrelationID, tm(s.CreatedAt), tm(s.UpdatedAt),
		tm(s.FinishedAt), s.Version, bucket.Of(s.ID))
}

// GetSaga implements store.SagaRows; NotFound if missing.
func (t *tx) GetSaga(ctx context.Context, id string) (saga.Instance, error) {
	s, err := scanSaga(t.queryRowContext(ctx, sqlGetSaga, id))
	if err != nil {
		return saga.Instance{}, getErr(ctx, err, "saga "+quoted(id))
	}
	return s, nil
}

// UpdateSaga implements store.SagaRows: it stores s (with s.Version as given)
// if the stored version is expectedVersion; Conflict if not, NotFound if missing.
func (t *tx) UpdateSaga(ctx context.Context, s saga.Instance, expectedVersion int64) error {
	data, err := toJSON(s.Data, "saga data")
	if err != nil {
		return err
	}
	return t.updateVersioned(ctx, "saga "+quoted(s.ID), expectedVersion, sqlUpdateSaga,
		[]any{s.Type, string(s.State), data, s.Step, s.Attempts, s.LeaseOwner, tm(s.LeaseUntil),
			tm(s.NextAttemptAt), note(s.LastError), s.CorrelationID, tm(s.CreatedAt), tm(s.UpdatedAt),
			tm(s.FinishedAt), s.Version, s.ID, expectedVersion},
		sqlSagaExists, s.ID)
}

// ListSagasDue implements store.SagaRows. limit <= 0 returns nothing.
func (t *tx) ListSagasDue(ctx context.Context, now time.Time, limit int) ([]saga.Instance, error) {
	if limit <= 0 {
		return nil, nil
	}
	return t.listSagas(ctx, "list due sagas", sqlListSagasDue,
		string(saga.StatePending), string(saga.StateRunning), string(saga.StateCompensating),
		tm(now), tm(now), limit)
}

// ListSagasByState implements store.SagaRows. limit <= 0 returns nothing.
func (t *tx) ListSagasByState(ctx context.Context, st saga.State, updatedBefore time.Time, limit int) ([]saga.Instance, error) {
	if limit <= 0 {
		return nil, nil
	}
	before := maxMicros
	if !updatedBefore.IsZero() {
		before = tm(updatedBefore)
	}
	return t.listSagas(ctx, "list sagas by state", sqlListSagasByState, string(st), before, limit)
}

// CountSagasUpdatedSince implements store.SagaRows through the
// (state, updated_at) index, LIMIT-bounded.
func (t *tx) CountSagasUpdatedSince(ctx context.Context, st saga.State, since time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	var n int
	err := t.queryAll(ctx, "count sagas by state", sqlCountSagasSince, []any{string(st), tm(since), limit},
		func(r rowScanner) error { return r.Scan(&n) })
	return n, err
}

func (t *tx) listSagas(ctx context.Context, what, query string, args ...any) ([]saga.Instance, error) {
	var out []saga.Instance
	err := t.queryAll(ctx, what, query, args, func(r rowScanner) error {
		s, err := scanSaga(r)
		out = append(out, s)
		return err
	})
	return out, err
}

// AppendSagaLog implements store.SagaRows; Conflict if (saga, seq) exists.
func (t *tx) AppendSagaLog(ctx context.Context, e saga.LogEntry) error {
	return t.insert(ctx, "saga log entry", sqlAppendSagaLog,
		e.SagaID, e.Seq, e.Step, string(e.Direction), string(e.Outcome), e.Attempt, note(e.Error),
		string(e.StateAfter), e.DurationMS, tm(e.At), e.MessageID)
}

// ListSagaLog implements store.SagaRows: the log in seq order (empty, not
// NotFound, for an unknown saga).
func (t *tx) ListSagaLog(ctx context.Context, sagaID string) ([]saga.LogEntry, error) {
	var out []saga.LogEntry
	err := t.queryAll(ctx, "list saga log", sqlListSagaLog, []any{sagaID}, func(r rowScanner) error {
		var (
			e                        saga.LogEntry
			dir, outcome, stateAfter string
			at                       int64
		)
		err := r.Scan(&e.SagaID, &e.Seq, &e.Step, &dir, &outcome, &e.Attempt, &e.Error, &stateAfter,
			&e.DurationMS, &at, &e.MessageID)
		e.Direction, e.Outcome, e.StateAfter = saga.Direction(dir), saga.Outcome(outcome), saga.State(stateAfter)
		e.At = fromTm(at)
		out = append(out, e)
		return err
	})
	return out, err
}

func scanSaga(r rowScanner) (saga.Instance, error) {
	var (
		s                                   saga.Instance
		state, data                         string
		lease, next, created, upd, finished int64
	)
	if err := r.Scan(&s.ID, &s.Type, &state, &data, &s.Step, &s.Attempts, &s.LeaseOwner, &lease,
		&next, &s.LastError, &s.CorrelationID, &created, &upd, &finished, &s.Version); err != nil {
		return saga.Instance{}, err
	}
	s.State = saga.State(state)
	s.LeaseUntil, s.NextAttemptAt = fromTm(lease), fromTm(next)
	s.CreatedAt, s.UpdatedAt, s.FinishedAt = fromTm(created), fromTm(upd), fromTm(finished)
	return s, fromJSON(data, &s.Data, "saga data")
}

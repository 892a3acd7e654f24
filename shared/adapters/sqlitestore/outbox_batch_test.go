package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// The batched lease and mark change exactly the rows at their expected
// version, whatever the batch length: stale versions in the middle of a
// batch and at the seams between statements (maxVersionedRows) and between
// padded lengths, missing ids and repeated pairs are skipped and not counted.
func TestBatchedOutboxWritesSkipStaleRowsAndCountExactly(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "batch.db"), Config{})
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, size := range []int{1, 3, 5, maxVersionedRows - 1, maxVersionedRows, maxVersionedRows + 1, 2*maxVersionedRows + 90, bigBatch} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			ids := make([]string, size)
			err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				for i := range ids {
					ids[i] = fmt.Sprintf("b%d-%04d", size, i)
					if i%4 == 1 {
						ids[i] += ` "quoted" 'single' \back\slash é 😀`
					}
					e := outbox.Event{ID: ids[i], AggregateType: "saga", AggregateID: "agg-" + ids[i], EventType: outbox.TypeSagaAdvance,
						Destination: outbox.DestSagaCommands, Payload: []byte(`{}`), Status: outbox.StatusPending,
						NextAttemptAt: at, CreatedAt: at, LastError: "earlier", Version: 5}
					if err := tx.InsertOutbox(ctx, e); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			// Stale: the middle row, both sides of every statement seam, and
			// the last row; the rest expect version 5.
			stale := map[int]bool{size / 2: true, size - 1: size > 1}
			for seam := maxVersionedRows; seam < size; seam += maxVersionedRows {
				stale[seam-1], stale[seam] = true, true
			}
			batch := func(version func(i int) int64) []store.OutboxVersion {
				var rows []store.OutboxVersion
				for i, id := range ids {
					rows = append(rows, store.OutboxVersion{ID: id, Version: version(i)})
				}
				return rows
			}
			fresh := 0
			for i := range ids {
				if !stale[i] {
					fresh++
				}
			}
			lease := batch(func(i int) int64 {
				if stale[i] {
					return 4
				}
				return 5
			})
			// A missing id and a repeated pair change nothing more.
			lease = append(lease, store.OutboxVersion{ID: "no-such-row", Version: 5}, lease[0])
			until := at.Add(time.Minute)
			var leased, marked int
			err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) (err error) {
				leased, err = tx.LeaseOutbox(ctx, lease, "relay-x", until)
				return err
			})
			if err != nil || leased != fresh {
				t.Fatalf("LeaseOutbox of %d rows = %d, %v; want %d", len(lease), leased, err, fresh)
			}
			for i, id := range ids {
				if size == bigBatch {
					break // counted; rows are checked on the smaller batches
				}
				e := getOutbox(t, s, id)
				if stale[i] != (e.Version == 5) || !stale[i] && (e.Version != 6 || e.LeaseOwner != "relay-x" || !e.LeaseUntil.Equal(until)) ||
					stale[i] && (e.LeaseOwner != "" || !e.LeaseUntil.IsZero()) {
					t.Fatalf("row %d (stale %v) after lease: version %d, lease %q until %v", i, stale[i], e.Version, e.LeaseOwner, e.LeaseUntil)
				}
			}
			// Mark expects version 6: the rows that were stale for the lease
			// (still at 5) are stale again.
			err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) (err error) {
				marked, err = tx.MarkOutboxPublished(ctx, batch(func(int) int64 { return 6 }), at.Add(time.Second))
				return err
			})
			if err != nil || marked != fresh {
				t.Fatalf("MarkOutboxPublished = %d, %v; want %d", marked, err, fresh)
			}
			if size == bigBatch {
				return
			}
			for i, id := range ids {
				e := getOutbox(t, s, id)
				published := e.Status == outbox.StatusPublished && e.Version == 7 && e.LeaseOwner == "" && e.LeaseUntil.IsZero() &&
					e.LastError == "" && e.PublishedAt.Equal(at.Add(time.Second))
				untouched := e.Status == outbox.StatusPending && e.Version == 5 && e.LastError == "earlier" && e.PublishedAt.IsZero()
				if stale[i] && !untouched || !stale[i] && !published {
					t.Fatalf("row %d (stale %v) after mark: %+v", i, stale[i], e)
				}
			}
		})
	}
}

// bigBatch needs more variables (two per row) than SQLite's current limit,
// 32766: LeaseOutbox and MarkOutboxPublished must split it.
const bigBatch = 16400

// One batched statement seeks each pair by primary key: it never scans the
// outbox (a scan would cost O(table) per claim).
func TestBatchedOutboxWritesSeekByPrimaryKey(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "plan.db"), Config{})
	for name, q := range map[string]string{"lease": sqlLeaseOutbox, "mark": sqlMarkOutboxPublished} {
		args := []any{"a", 1, 2}
		for i := 0; i < 4; i++ {
			args = append(args, fmt.Sprint("id", i), 1)
		}
		query := sprintfSQL(q, versionedValues(4))
		args = args[:strings.Count(query, "?")]
		text := queryPlan(t, s.DB(), query, args...)
		if strings.Contains(text, "SCAN outbox") || !strings.Contains(text, "SEARCH outbox USING INDEX sqlite_autoindex_outbox_1 (id=?)") {
			t.Errorf("%s: plan %q, want one primary-key search per pair", name, text)
		}
	}
}

// An id that is not valid UTF-8 is refused (Invalid) and nothing changes,
// as for every other text the store is given.
func TestBatchedOutboxWritesRefuseInvalidText(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "bad.db"), Config{})
	ctx := context.Background()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertOutbox(ctx, outbox.Event{ID: "good", AggregateType: "saga", AggregateID: "a", EventType: outbox.TypeSagaAdvance,
			Destination: outbox.DestSagaCommands, Payload: []byte(`{}`), Status: outbox.StatusPending, NextAttemptAt: at, CreatedAt: at, Version: 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := []store.OutboxVersion{{ID: "good", Version: 1}, {ID: "bad\xff", Version: 1}}
	for name, write := range map[string]func(context.Context, store.Tx) (int, error){
		"lease": func(ctx context.Context, tx store.Tx) (int, error) { return tx.LeaseOutbox(ctx, rows, "r", at) },
		"mark":  func(ctx context.Context, tx store.Tx) (int, error) { return tx.MarkOutboxPublished(ctx, rows, at) },
	} {
		err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := write(ctx, tx)
			return err
		})
		if !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("%s: %v; want Invalid (not valid UTF-8)", name, err)
		}
		if e := getOutbox(t, s, "good"); e.Version != 1 || e.LeaseOwner != "" || e.Status != outbox.StatusPending {
			t.Errorf("%s changed the valid row of the refused batch: %+v", name, e)
		}
	}
}

func getOutbox(t *testing.T, s *Store, id string) outbox.Event {
	t.Helper()
	var e outbox.Event
	err := s.View(context.Background(), func(ctx context.Context, tx store.Tx) (err error) {
		e, err = tx.GetOutbox(ctx, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

package sqlitestore

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/store"
)

// When SQLite rolls the whole transaction back under a member (SQLITE_FULL
// on a statement without a statement journal: sqlite.org/lang_transaction.html,
// "Response To Errors Within A Transaction") and that member's fn carries on
// and returns nil, group.go promises that every member whose fn succeeded
// gets the error and that none of their writes is kept. The savepoint pass
// notices (RELEASE fails: the savepoint is gone); the optimistic pass probes
// after each member (txLost). Without the probe the next member's statements
// ran in autocommit mode and were committed one by one, and then the COMMIT
// failed and that member was told its transaction failed: its writes
// existed although InTx returned an error.
func TestGroupMemberAfterAnAutomaticRollbackKeepsNothing(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "full.db"), Config{})
	ctx := context.Background()
	var wg sync.WaitGroup
	release := holdWriter(t, s, &wg)
	var fullErr error
	swallow := func(ctx context.Context, tx store.Tx) error {
		sq := tx.(store.SQLTx)
		var pages int
		if err := sq.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
			return err
		}
		if _, err := sq.ExecContext(ctx, "PRAGMA max_page_count = "+itoa(pages)); err != nil {
			return err
		}
		fullErr = tx.InsertAudit(ctx, dlq.AuditRecord{ID: "big", At: time.Unix(1700000000, 0), Actor: "t", Action: "a",
			Outcome: strings.Repeat("x", 256<<10)})
		_, _ = sq.ExecContext(ctx, "PRAGMA max_page_count = 1073741823")
		return nil // best effort: the big record may be lost
	}
	other := func(ctx context.Context, tx store.Tx) error { return audit(ctx, tx, "b") }
	errs := make([]error, 2)
	for i, fn := range []func(context.Context, store.Tx) error{swallow, other} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = s.InTx(ctx, fn) }()
		waitQueued(s, i+1) // arrival order: swallow, then other
	}
	release()
	wg.Wait()
	if fullErr == nil {
		t.Fatal("the big insert did not fail: the test did not provoke SQLITE_FULL")
	}
	ids := strings.Join(auditIDs(t, s), ",")
	kept := strings.Contains(ids, "b")
	if kept != (errs[1] == nil) {
		t.Errorf("member b: InTx returned %v, yet its row kept = %v (rows %s; full error %v)", errs[1], kept, ids, fullErr)
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{digits[n%10]}, b...)
	}
	return string(b)
}

package sqlitequeue

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// A delivery is found by its receipt handle through the partial index of
// received messages (a send writes no entry into it).
func TestReceiptHandleLookupsUseThePartialIndex(t *testing.T) {
	q, err := Open(filepath.Join(t.TempDir(), "q.db"), Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	for _, stmt := range []string{
		`DELETE FROM queue_messages WHERE queue = ? AND receipt_handle = ?`,
		`UPDATE queue_messages SET visible_at_ms = ? WHERE queue = ? AND receipt_handle = ?`,
		`DELETE FROM queue_messages WHERE queue = ? AND receipt_handle IN (?, ?)`,
	} {
		rows, err := q.db.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+stmt, 1, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		if text := strings.Join(plan, "; "); !strings.Contains(text, "queue_messages_receipt") {
			t.Errorf("%s: plan %q, want the receipt index", stmt, text)
		}
	}
}

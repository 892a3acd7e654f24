package sqlitequeue

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
)

// TestSharedDatabase runs the queue next to another user of the same file:
// New over the other user's *sql.DB, plus a second process-like handle
// (Open on the same path) receiving concurrently.
func TestSharedDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Exec(`CREATE TABLE orders (id TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	q1, err := New(db, Config{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := q1.Close(); err != nil { // must not close the shared handle
		t.Fatalf("Close: %v", err)
	}
	q2, err := Open(path, Config{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { q2.Close() })
	url := mustEnsure(t, q1, queue.QueueSpec{Name: "shared", VisibilityTimeout: time.Hour})

	// A long poll on q2 sees a send through q1 (no in-process wakeup).
	done := make(chan []queue.Message, 1)
	go func() { done <- mustReceive(t, q2, url, queue.ReceiveOptions{Wait: 5 * time.Second}) }()
	time.Sleep(20 * time.Millisecond)
	mustSend(t, q1, url, queue.OutMessage{ID: "a", Body: "cross"})
	if got := <-done; len(got) != 1 || got[0].Body != "cross" {
		t.Fatalf("cross-handle long poll = %+v", got)
	}

	const n = 40
	var msgs []queue.OutMessage
	for i := 0; i < n; i++ {
		msgs = append(msgs, queue.OutMessage{ID: fmt.Sprintf("m%d", i), Body: fmt.Sprint(i)})
	}
	if _, err := queue.SendAll(context.Background(), q1, url, msgs); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		seen = map[string]int{}
		wg   sync.WaitGroup
	)
	for i, q := range []*Queue{q1, q2, q1, q2} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				got, err := q.Receive(context.Background(), url, queue.ReceiveOptions{Max: 3})
				if err != nil {
					t.Errorf("receiver %d: %v", i, err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				for _, m := range got {
					seen[m.MessageID]++
				}
				mu.Unlock()
				// Other writers interleave with the queue's transactions.
				if _, err := db.Exec(`INSERT INTO orders (id) VALUES (?)`, got[0].MessageID); err != nil {
					t.Errorf("orders insert: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("received %d distinct messages, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("message %s delivered %d times", id, c)
		}
	}
}

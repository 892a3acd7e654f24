package sqlitequeue

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/adapters/sqlitestore/sqlitetest"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
)

// inTxFixture is the local stack's arrangement: the SQLite store on a file
// and the embedded queue over the store's own *sql.DB, so SendInTx can write
// inside the store's transactions.
type inTxFixture struct {
	path    string
	st      *sqlitestore.Store
	q       *Queue
	url     string
	arrived atomic.Int64 // InTx/View calls (sqlitestore Options.OnTx)
}

func newInTxFixture(t *testing.T) *inTxFixture {
	t.Helper()
	f := &inTxFixture{path: filepath.Join(t.TempDir(), "app.db")}
	st, err := sqlitestore.Open(context.Background(), f.path, sqlitestore.Config{
		OnTx: func(bool) { f.arrived.Add(1) },
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(st.DB(), Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = st.Close() })
	f.st, f.q = st, q
	f.url = mustEnsure(t, q, queue.QueueSpec{Name: "orders", VisibilityTimeout: time.Hour})
	return f
}

// stored counts the messages in the file, read through a read-only handle of
// its own (usable while a store transaction holds the writer connection).
func (f *inTxFixture) stored(t *testing.T) int {
	t.Helper()
	return sqlitetest.RowCounts(t, f.path)["queue_messages"]
}

// receiveAll receives (and deletes) every visible message of the fixture's
// queue, by body.
func (f *inTxFixture) receiveAll(t *testing.T) map[string]queue.Message {
	t.Helper()
	got := map[string]queue.Message{}
	for {
		msgs := mustReceive(t, f.q, f.url, queue.ReceiveOptions{Max: queue.MaxBatch})
		if len(msgs) == 0 {
			return got
		}
		for _, m := range msgs {
			if _, dup := got[m.Body]; dup {
				t.Errorf("message %q received twice", m.Body)
			}
			got[m.Body] = m
			if err := f.q.Delete(context.Background(), f.url, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// outboxRow is a store row written next to the messages, to show the
// transaction's other writes commit (or not) with them.
func outboxRow(id string) outbox.Event {
	now := time.Now().UTC()
	return outbox.Event{ID: id, AggregateType: "saga", AggregateID: "agg-" + id, EventType: outbox.TypeSagaAdvance,
		Destination: outbox.DestSagaCommands, Payload: []byte(`{}`), Status: outbox.StatusPending,
		NextAttemptAt: now, CreatedAt: now, Version: 1}
}

func (f *inTxFixture) hasOutbox(t *testing.T, id string) bool {
	t.Helper()
	err := f.st.View(context.Background(), func(ctx context.Context, tx store.Tx) error {
		_, err := tx.GetOutbox(ctx, id)
		return err
	})
	if err != nil && !apperr.Is(err, apperr.NotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// sendInTx calls SendInTx and fails the test unless it could write in tx.
func sendInTx(t *testing.T, ctx context.Context, q *Queue, tx store.Tx, url string, msgs ...queue.OutMessage) ([]queue.SendResult, error) {
	t.Helper()
	res, ok, err := q.SendInTx(ctx, tx, url, msgs)
	if !ok {
		t.Errorf("SendInTx: ok = false for a transaction of the queue's own database")
	}
	return res, err
}

func TestSendInTxInvisibleUntilCommit(t *testing.T) {
	f := newInTxFixture(t)
	// A second handle on the file, as another process would have.
	other, err := Open(f.path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })

	var sent []queue.SendResult
	err = f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		res, err := sendInTx(t, ctx, f.q, tx, f.url, queue.OutMessage{ID: "a", Body: "first",
			Attributes: map[string]string{"event_id": "e-1"}})
		if err != nil {
			return err
		}
		sent = res
		if n := f.stored(t); n != 0 {
			t.Errorf("inside the transaction the file holds %d messages, want 0", n)
		}
		if vis, _, err := other.Depth(ctx, f.url); err != nil || vis != 0 {
			t.Errorf("inside the transaction another handle sees depth %d (err %v), want 0", vis, err)
		}
		return tx.InsertOutbox(ctx, outboxRow("row-1"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].ID != "a" || sent[0].Err != nil || sent[0].MessageID == "" {
		t.Fatalf("results = %+v", sent)
	}
	f.q.Committed(f.url)
	got := mustReceive(t, other, f.url, queue.ReceiveOptions{Max: 10})
	if len(got) != 1 {
		t.Fatalf("after commit received %d messages, want 1", len(got))
	}
	m := got[0]
	if m.Body != "first" || m.MessageID != sent[0].MessageID || m.Attributes["event_id"] != "e-1" || len(m.Attributes) != 1 {
		t.Errorf("received %+v, want body first, message id %s, the one attribute", m, sent[0].MessageID)
	}
	if !f.hasOutbox(t, "row-1") {
		t.Error("the transaction's store row is missing")
	}
}

// A long poll waiting on the queue is woken by Committed (not left to its
// poll interval, which is set far beyond the test's patience here).
func TestSendInTxCommittedWakesLongPoll(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := New(st.DB(), Config{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = st.Close() })
	url := mustEnsure(t, q, queue.QueueSpec{Name: "w", VisibilityTimeout: time.Hour})
	// The poll takes its wakeup channel before its first check; make sure
	// it is waiting (first check done, found nothing) before the send.
	polled := make(chan []queue.Message, 1)
	waiting := q.wakeup("w") // the same channel the poll will wait on
	go func() {
		msgs, err := q.Receive(context.Background(), url, queue.ReceiveOptions{Wait: queue.MaxWait})
		if err != nil {
			t.Error(err)
		}
		polled <- msgs
	}()
	err = st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		_, err := sendInTx(t, ctx, q, tx, url, queue.OutMessage{ID: "a", Body: "woken"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	q.Committed(url)
	select {
	case <-waiting:
	default:
		t.Fatal("Committed did not close the queue's wakeup channel")
	}
	if got := <-polled; len(got) != 1 || got[0].Body != "woken" {
		t.Fatalf("long poll got %+v", got)
	}
}

func TestSendInTxRolledBackWithTheTransaction(t *testing.T) {
	f := newInTxFixture(t)
	boom := errors.New("boom")
	err := f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if _, err := sendInTx(t, ctx, f.q, tx, f.url, queue.OutMessage{ID: "a", Body: "rolled-back"}); err != nil {
			return err
		}
		if err := tx.InsertOutbox(ctx, outboxRow("row-err")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("InTx = %v, want boom", err)
	}
	func() {
		defer func() {
			if p := recover(); p != "kaboom" {
				t.Errorf("recovered %v, want the body's panic", p)
			}
		}()
		_ = f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
			if _, err := sendInTx(t, ctx, f.q, tx, f.url, queue.OutMessage{ID: "b", Body: "panicked"}); err != nil {
				return err
			}
			if err := tx.InsertOutbox(ctx, outboxRow("row-panic")); err != nil {
				return err
			}
			panic("kaboom")
		})
	}()
	if n := f.stored(t); n != 0 {
		t.Errorf("after rollback and panic the file holds %d messages, want 0", n)
	}
	if f.hasOutbox(t, "row-err") || f.hasOutbox(t, "row-panic") {
		t.Error("a rolled-back store row survived")
	}
	// Nothing was left half-open: ordinary sends and in-tx sends still work.
	mustSend(t, f.q, f.url, queue.OutMessage{ID: "c", Body: "after"})
	err = f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		_, err := sendInTx(t, ctx, f.q, tx, f.url, queue.OutMessage{ID: "d", Body: "after-tx"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	got := f.receiveAll(t)
	if len(got) != 2 || got["after"].Body == "" || got["after-tx"].Body == "" {
		t.Errorf("received %v, want exactly the two later messages", keys(got))
	}
}

func TestSendInTxRefusesForeignTransactions(t *testing.T) {
	f := newInTxFixture(t)
	// A second store on another file: its transactions are SQL ones, but on
	// another database.
	st2, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "other.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st2.Close() })
	// A queue Opened on the store's own file: same database file, but its
	// own handle, so it must not write through the store's transaction.
	sameFile, err := Open(f.path, Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sameFile.Close() })
	msg := []queue.OutMessage{{ID: "a", Body: "x"}}
	check := func(name string, q *Queue, run func(func(context.Context, store.Tx) error) error) {
		t.Helper()
		err := run(func(ctx context.Context, tx store.Tx) error {
			res, ok, err := q.SendInTx(ctx, tx, f.url, msg)
			if ok || err != nil || res != nil {
				t.Errorf("%s: SendInTx = %v, %v, %v; want nil, false, nil", name, res, ok, err)
			}
			return nil
		})
		if err != nil {
			t.Errorf("%s: transaction: %v", name, err)
		}
	}
	ctx := context.Background()
	check("another store's write tx", f.q, func(fn func(context.Context, store.Tx) error) error { return st2.InTx(ctx, fn) })
	check("another store's read tx", f.q, func(fn func(context.Context, store.Tx) error) error { return st2.View(ctx, fn) })
	check("the store's read-only View tx", f.q, func(fn func(context.Context, store.Tx) error) error { return f.st.View(ctx, fn) })
	check("same file, other handle", sameFile, func(fn func(context.Context, store.Tx) error) error { return f.st.InTx(ctx, fn) })
	check("a tx that is not SQL", f.q, func(fn func(context.Context, store.Tx) error) error { return fn(ctx, notSQLTx{}) })
	if n := f.stored(t); n != 0 {
		t.Errorf("the file holds %d messages, want 0", n)
	}
}

// notSQLTx is a store.Tx of a store that is not SQL (the YDB store's kind).
type notSQLTx struct{ store.Tx }

func TestSendInTxBadQueueIsAnErrorTheTxSurvives(t *testing.T) {
	f := newInTxFixture(t)
	cases := []struct {
		url  string
		kind apperr.Kind
	}{
		{URL("no-such-queue"), apperr.NotFound},
		{"https://message-queue.api.cloud.yandex.net/b1/dj/orders", apperr.Invalid},
		{URL(""), apperr.Invalid},
	}
	err := f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertOutbox(ctx, outboxRow("before")); err != nil {
			return err
		}
		for _, c := range cases {
			res, err := sendInTx(t, ctx, f.q, tx, c.url, queue.OutMessage{ID: "a", Body: "lost"})
			if !apperr.Is(err, c.kind) || res != nil {
				t.Errorf("SendInTx(%q) = %v, %v; want no results and a %v error", c.url, res, err, c.kind)
			}
		}
		// The transaction is still good for the store and for the queue.
		if _, err := sendInTx(t, ctx, f.q, tx, f.url, queue.OutMessage{ID: "b", Body: "kept"}); err != nil {
			return err
		}
		return tx.InsertOutbox(ctx, outboxRow("after"))
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	if !f.hasOutbox(t, "before") || !f.hasOutbox(t, "after") {
		t.Error("the transaction's store rows did not commit")
	}
	got := f.receiveAll(t)
	if len(got) != 1 || got["kept"].Body != "kept" {
		t.Errorf("received %v, want only kept", keys(got))
	}
	// The unknown queue is still unknown to a later send (no negative or
	// positive caching of a failed look-up).
	if _, err := f.q.SendBatch(context.Background(), URL("no-such-queue"), []queue.OutMessage{{ID: "a", Body: "x"}}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("SendBatch to the unknown queue after the tx = %v, want NotFound", err)
	}
}

func TestSendInTxPerEntryErrors(t *testing.T) {
	f := newInTxFixture(t)
	msgs := []queue.OutMessage{
		{ID: "ok1", Body: "ok1", Attributes: map[string]string{"k": "v"}},
		{ID: "empty", Body: ""},
		{ID: "huge", Body: strings.Repeat("x", queue.MaxMessageBytes+1)},
		{ID: "late", Body: "late", Delay: queue.MaxDelay + time.Second},
		{ID: "badattr", Body: "badattr", Attributes: map[string]string{"k": ""}},
		{ID: "ok2", Body: "ok2", Delay: 0},
	}
	var res []queue.SendResult
	err := f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		var err error
		res, err = sendInTx(t, ctx, f.q, tx, f.url, msgs...)
		return err
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	if len(res) != len(msgs) {
		t.Fatalf("%d results for %d entries", len(res), len(msgs))
	}
	for i, r := range res {
		wantErr := queue.CheckMessage(msgs[i])
		if r.ID != msgs[i].ID {
			t.Errorf("result %d has id %q, want %q", i, r.ID, msgs[i].ID)
		}
		switch {
		case wantErr == nil && (r.Err != nil || r.MessageID == ""):
			t.Errorf("entry %s: %+v, want sent", r.ID, r)
		case wantErr != nil && (!apperr.Is(r.Err, apperr.Invalid) || r.MessageID != ""):
			t.Errorf("entry %s: %+v, want an Invalid entry error and no message id", r.ID, r)
		}
	}
	got := f.receiveAll(t)
	if len(got) != 2 || got["ok1"].Attributes["k"] != "v" || got["ok2"].Body != "ok2" {
		t.Errorf("received %v, want ok1 and ok2", keys(got))
	}
	if got["ok1"].MessageID != res[0].MessageID || got["ok2"].MessageID != res[5].MessageID {
		t.Error("received message ids differ from the results'")
	}

	// A whole-batch error (duplicate entry ids, too many entries, none):
	// nothing of the call, and the transaction commits its other writes.
	bad := [][]queue.OutMessage{
		{{ID: "d", Body: "1"}, {ID: "d", Body: "2"}},
		make([]queue.OutMessage, queue.MaxBatch+1),
		nil,
	}
	for i := range bad[1] {
		bad[1][i] = queue.OutMessage{ID: fmt.Sprint("m", i), Body: "b"}
	}
	err = f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for _, b := range bad {
			if res, err := sendInTx(t, ctx, f.q, tx, f.url, b...); !apperr.Is(err, apperr.Invalid) || res != nil {
				t.Errorf("SendInTx(%d entries) = %v, %v; want Invalid", len(b), res, err)
			}
		}
		return tx.InsertOutbox(ctx, outboxRow("still"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := f.stored(t); n != 0 {
		t.Errorf("a refused batch left %d messages", n)
	}
	if !f.hasOutbox(t, "still") {
		t.Error("the transaction's store row did not commit")
	}
}

// A delayed entry sent in the transaction is hidden for its delay, exactly as
// with SendBatch.
func TestSendInTxDelay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	st, err := sqlitestore.Open(context.Background(), path, sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	q, err := New(st.DB(), Config{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = q.Close(); _ = st.Close() })
	url := mustEnsure(t, q, queue.QueueSpec{Name: "d", VisibilityTimeout: time.Hour})
	err = st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		_, err := sendInTx(t, ctx, q, tx, url,
			queue.OutMessage{ID: "now", Body: "now"},
			queue.OutMessage{ID: "later", Body: "later", Delay: 30 * time.Second})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := mustReceive(t, q, url, queue.ReceiveOptions{Max: 10}); len(got) != 1 || got[0].Body != "now" {
		t.Fatalf("before the delay: %+v", got)
	}
	clock.Advance(29 * time.Second)
	if got := mustReceive(t, q, url, queue.ReceiveOptions{Max: 10}); len(got) != 0 {
		t.Fatalf("1s before the delay ends: %+v", got)
	}
	clock.Advance(time.Second)
	if got := mustReceive(t, q, url, queue.ReceiveOptions{Max: 10}); len(got) != 1 || got[0].Body != "later" {
		t.Fatalf("after the delay: %+v", got)
	}
}

// Concurrent InTx calls run as one group transaction, each in a savepoint:
// the messages of members whose body fails (error, panic) vanish with their
// savepoint, the others' are committed.
func TestSendInTxInsideAGroupCommit(t *testing.T) {
	f := newInTxFixture(t)
	const n = 24
	// Hold the writer so the n callers queue up and run as a group.
	release, holding := make(chan struct{}), make(chan struct{})
	holderDone := make(chan error, 1)
	go func() {
		holderDone <- f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
			close(holding)
			<-release
			_, err := sendInTx(t, ctx, f.q, tx, f.url, queue.OutMessage{ID: "h", Body: "holder"})
			return err
		})
	}()
	<-holding
	base := f.arrived.Load()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		committed = map[string]bool{"holder": true}
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := fmt.Sprint("m", i)
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						err = fmt.Errorf("panicked: %v", p)
					}
				}()
				err = f.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
					msgs := []queue.OutMessage{{ID: "a", Body: body}, {ID: "b", Body: body + "-b"}}
					if i%5 == 1 {
						msgs[1].Body = "" // an entry error: the valid entry still goes
					}
					res, err := sendInTx(t, ctx, f.q, tx, f.url, msgs...)
					if err != nil {
						return err
					}
					if err := tx.InsertOutbox(ctx, outboxRow("row-"+body)); err != nil {
						return err
					}
					switch {
					case i%4 == 3:
						return errors.New("member fails")
					case i%7 == 5:
						panic("member panics")
					}
					mu.Lock()
					for j, r := range res {
						if r.Err == nil {
							committed[msgs[j].Body] = true
						}
					}
					mu.Unlock()
					return nil
				})
			}()
			if (i%4 == 3 || i%7 == 5) == (err == nil) {
				t.Errorf("member %d: InTx = %v", i, err)
			}
			if err != nil {
				// Not committed after all (if it had claimed success).
				mu.Lock()
				delete(committed, body)
				delete(committed, body+"-b")
				mu.Unlock()
			}
		}()
	}
	// Release the holder once every caller has entered InTx (the callers
	// then wait for the writer).
	for f.arrived.Load() < base+n {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if err := <-holderDone; err != nil {
		t.Fatal(err)
	}
	if vis, _, err := f.q.Depth(context.Background(), f.url); err != nil || vis != len(committed) {
		t.Errorf("depth %d (err %v), want %d committed messages", vis, err, len(committed))
	}
	got := f.receiveAll(t)
	if len(got) != len(committed) {
		t.Errorf("received %d messages, want %d", len(got), len(committed))
	}
	for b := range committed {
		if _, ok := got[b]; !ok {
			t.Errorf("committed message %s missing", b)
		}
	}
	for b := range got {
		if !committed[b] {
			t.Errorf("message %s of a failed member was delivered", b)
		}
	}
	for i := 0; i < n; i++ {
		body := fmt.Sprint("m", i)
		if want := committed[body]; f.hasOutbox(t, "row-"+body) != want {
			t.Errorf("member %d: store row present = %v, want %v", i, !want, want)
		}
	}
}

func keys(m map[string]queue.Message) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

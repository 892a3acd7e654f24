package sqlitequeue

import (
	"context"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// DeleteBatch deletes exactly the named deliveries in one call; a handle of
// a message already deleted is skipped; a malformed handle or a batch of
// the wrong size fails before anything is deleted.
func TestDeleteBatch(t *testing.T) {
	ctx := context.Background()
	q, _ := newFake(t)
	url := mustEnsure(t, q, queue.QueueSpec{Name: "del"})
	mustSend(t, q, url, queue.OutMessage{ID: "a", Body: "a"}, queue.OutMessage{ID: "b", Body: "b"},
		queue.OutMessage{ID: "c", Body: "c"}, queue.OutMessage{ID: "d", Body: "d"})
	got := mustReceive(t, q, url, queue.ReceiveOptions{Max: 10})
	if len(got) != 4 {
		t.Fatalf("received %d", len(got))
	}
	if err := q.Delete(ctx, url, got[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]string{nil, {got[1].ReceiptHandle, ""}, make([]string, 11)} {
		if err := q.DeleteBatch(ctx, url, bad); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("DeleteBatch(%d handles) = %v, want Invalid", len(bad), err)
		}
	}
	if _, inFlight, _ := q.Depth(ctx, url); inFlight != 3 {
		t.Fatalf("a refused batch deleted something: %d in flight, want 3", inFlight)
	}
	if err := q.DeleteBatch(ctx, url, []string{got[0].ReceiptHandle, got[1].ReceiptHandle, got[2].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if vis, inFlight, _ := q.Depth(ctx, url); vis != 0 || inFlight != 1 {
		t.Fatalf("after the batch delete: %d visible, %d in flight, want 0 and 1 (d)", vis, inFlight)
	}
	if err := q.DeleteBatch(ctx, "sqlitequeue:///nope", []string{got[3].ReceiptHandle}); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("unknown queue: %v, want NotFound", err)
	}
}

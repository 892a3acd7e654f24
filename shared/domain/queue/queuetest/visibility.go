package queuetest

import (
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

func testVisibilityTimeoutRedelivers(t *testing.T, s *suite) {
	url := s.ensure(t, "vis", queue.QueueSpec{})
	s.send(t, url, queue.OutMessage{ID: "m", Body: "v"})
	vt := s.u
	start := time.Now()
	first := s.pollOne(t, url, queue.ReceiveOptions{VisibilityTimeout: vt}, 3*s.u)
	if again := s.receive(t, url, queue.ReceiveOptions{}); len(again) > 0 {
		if elapsed := time.Since(start); elapsed < vt {
			t.Fatalf("message delivered again %s after the first receive, inside its %s visibility timeout", elapsed, vt)
		}
		t.Logf("inconclusive: second receive ran after the visibility timeout")
		return
	}
	second := s.pollOne(t, url, queue.ReceiveOptions{}, vt+4*s.u)
	if elapsed := time.Since(start); elapsed < vt {
		t.Errorf("redelivered after %s, before the %s visibility timeout", elapsed, vt)
	}
	if second.MessageID != first.MessageID || second.Body != first.Body {
		t.Errorf("redelivered %q/%q, want %q/%q", second.MessageID, second.Body, first.MessageID, first.Body)
	}
	if second.ReceiveCount != first.ReceiveCount+1 {
		t.Errorf("ReceiveCount = %d after %d, want +1", second.ReceiveCount, first.ReceiveCount)
	}
	if second.ReceiptHandle == first.ReceiptHandle {
		t.Error("redelivery reused the receipt handle")
	}
}

func testChangeVisibilityZero(t *testing.T, s *suite) {
	url := s.ensure(t, "cvzero", queue.QueueSpec{VisibilityTimeout: time.Hour})
	s.send(t, url, queue.OutMessage{ID: "m", Body: "z"})
	first := s.pollOne(t, url, queue.ReceiveOptions{}, 3*s.u)
	if err := s.q.ChangeVisibility(s.ctx(t), url, first.ReceiptHandle, 0); err != nil {
		t.Fatalf("ChangeVisibility(0): %v", err)
	}
	second := s.pollOne(t, url, queue.ReceiveOptions{}, 3*s.u)
	if second.MessageID != first.MessageID || second.ReceiveCount != 2 {
		t.Errorf("got %q count %d, want %q count 2", second.MessageID, second.ReceiveCount, first.MessageID)
	}
}

func testChangeVisibilityExtends(t *testing.T, s *suite) {
	url := s.ensure(t, "cvext", queue.QueueSpec{})
	s.send(t, url, queue.OutMessage{ID: "m", Body: "e"})
	m := s.pollOne(t, url, queue.ReceiveOptions{VisibilityTimeout: s.u}, 3*s.u)
	if err := s.q.ChangeVisibility(s.ctx(t), url, m.ReceiptHandle, time.Hour); err != nil {
		t.Fatalf("ChangeVisibility(1h): %v", err)
	}
	if got := s.poll(t, url, queue.ReceiveOptions{}, 3*s.u); len(got) != 0 {
		t.Fatalf("message delivered again although its visibility was extended to 1h")
	}
	// The extended handle is still the current one: it can be deleted.
	if err := s.q.Delete(s.ctx(t), url, m.ReceiptHandle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := waitDepth(t, s, url, 0, 0); err != nil {
		t.Fatal(err)
	}
}

func testChangeVisibilityAfterDelete(t *testing.T, s *suite) {
	url := s.ensure(t, "cvdel", queue.QueueSpec{})
	s.send(t, url, queue.OutMessage{ID: "m", Body: "d"})
	m := s.pollOne(t, url, queue.ReceiveOptions{}, 3*s.u)
	if err := s.q.Delete(s.ctx(t), url, m.ReceiptHandle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	err := s.q.ChangeVisibility(s.ctx(t), url, m.ReceiptHandle, time.Minute)
	wantKind(t, "ChangeVisibility of a deleted message", err, apperr.NotFound)
	wantKind(t, "ChangeVisibility with an empty handle", s.q.ChangeVisibility(s.ctx(t), url, "", 0), apperr.Invalid)
	wantKind(t, "ChangeVisibility beyond 12h", s.q.ChangeVisibility(s.ctx(t), url, m.ReceiptHandle, 13*time.Hour), apperr.Invalid)
}

func testReceiveCountIncrements(t *testing.T, s *suite) {
	url := s.ensure(t, "count", queue.QueueSpec{VisibilityTimeout: time.Hour})
	res := s.send(t, url, queue.OutMessage{ID: "m", Body: "c"})
	for want := 1; want <= 3; want++ {
		m := s.pollOne(t, url, queue.ReceiveOptions{}, 3*s.u)
		if m.MessageID != res[0].MessageID || m.ReceiveCount != want {
			t.Fatalf("receive %d: got %q count %d, want %q count %d", want, m.MessageID, m.ReceiveCount, res[0].MessageID, want)
		}
		if err := s.q.ChangeVisibility(s.ctx(t), url, m.ReceiptHandle, 0); err != nil {
			t.Fatalf("ChangeVisibility(0): %v", err)
		}
	}
}

func testDelete(t *testing.T, s *suite) {
	url := s.ensure(t, "del", queue.QueueSpec{})
	s.send(t, url, queue.OutMessage{ID: "m", Body: "gone"})
	m := s.pollOne(t, url, queue.ReceiveOptions{VisibilityTimeout: s.u}, 3*s.u)
	if err := s.q.Delete(s.ctx(t), url, m.ReceiptHandle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.q.Delete(s.ctx(t), url, m.ReceiptHandle); err != nil {
		t.Fatalf("second Delete: %v, want nil (idempotent)", err)
	}
	wantKind(t, "Delete with an empty handle", s.q.Delete(s.ctx(t), url, ""), apperr.Invalid)
	// Wait past the visibility timeout: a deleted message never comes back.
	if got := s.poll(t, url, queue.ReceiveOptions{}, 3*s.u); len(got) != 0 {
		t.Fatalf("deleted message delivered again: %+v", got)
	}
	if err := waitDepth(t, s, url, 0, 0); err != nil {
		t.Fatal(err)
	}
}

func testDelay(t *testing.T, s *suite) {
	url := s.ensure(t, "delay", queue.QueueSpec{})
	delay := 2 * s.u
	start := time.Now()
	s.send(t, url, queue.OutMessage{ID: "m", Body: "later", Delay: delay})
	if got := s.receive(t, url, queue.ReceiveOptions{}); len(got) > 0 {
		if elapsed := time.Since(start); elapsed < delay {
			t.Fatalf("delayed message delivered after %s, inside its %s delay", elapsed, delay)
		}
		t.Logf("inconclusive: first receive ran after the delay")
		return
	}
	m := s.pollOne(t, url, queue.ReceiveOptions{}, delay+4*s.u)
	if elapsed := time.Since(start); elapsed < delay {
		t.Errorf("delayed message delivered after %s, before its %s delay", elapsed, delay)
	}
	if m.Body != "later" || m.ReceiveCount != 1 {
		t.Errorf("got %q count %d, want %q count 1", m.Body, m.ReceiveCount, "later")
	}
}

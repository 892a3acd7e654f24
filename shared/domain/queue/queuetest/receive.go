package queuetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

func testReceiveInvalidOptions(t *testing.T, s *suite) {
	url := s.ensure(t, "rcvopts", queue.QueueSpec{})
	for _, opts := range []queue.ReceiveOptions{
		{Max: 11},
		{Max: -1},
		{Max: 1, Wait: queue.MaxWait + time.Second},
		{Max: 1, Wait: -time.Second},
		{Max: 1, VisibilityTimeout: queue.MaxVisibilityTimeout + time.Second},
	} {
		_, err := s.q.Receive(s.ctx(t), url, opts)
		wantKind(t, fmt.Sprintf("Receive(%+v)", opts), err, apperr.Invalid)
	}
}

func testLongPollReturnsOnSend(t *testing.T, s *suite) {
	url := s.ensure(t, "lpsend", queue.QueueSpec{})
	wait := 10 * s.u
	if wait > queue.MaxWait {
		wait = queue.MaxWait
	}
	type result struct {
		msgs    []queue.Message
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	go func() {
		start := time.Now()
		msgs, err := s.q.Receive(s.ctx(t), url, queue.ReceiveOptions{Max: 1, Wait: wait})
		done <- result{msgs, err, time.Since(start)}
	}()
	time.Sleep(s.u / 2) // let the receiver start waiting
	s.send(t, url, queue.OutMessage{ID: "m", Body: "wake up"})
	r := <-done
	if r.err != nil {
		t.Fatalf("Receive: %v", r.err)
	}
	if len(r.msgs) != 1 || r.msgs[0].Body != "wake up" {
		t.Fatalf("long poll returned %+v after %s, want the sent message", r.msgs, r.elapsed)
	}
	if r.elapsed >= wait {
		t.Errorf("long poll took %s, want it to return before its %s wait ended", r.elapsed, wait)
	}
}

func testLongPollEmptyAfterWait(t *testing.T, s *suite) {
	url := s.ensure(t, "lpempty", queue.QueueSpec{})
	wait := s.u
	start := time.Now()
	msgs := s.receive(t, url, queue.ReceiveOptions{Max: 10, Wait: wait})
	elapsed := time.Since(start)
	if len(msgs) != 0 {
		t.Fatalf("empty queue returned %d messages", len(msgs))
	}
	if elapsed < wait*9/10 {
		t.Errorf("long poll on an empty queue returned after %s, want about %s", elapsed, wait)
	}
}

func testLongPollWakesOnVisible(t *testing.T, s *suite) {
	if !s.f.LongPollWakesOnVisible {
		t.Skip("adapter declares Features.LongPollWakesOnVisible = false: long polls wake on send only")
	}
	url := s.ensure(t, "lpvis", queue.QueueSpec{})
	s.send(t, url, queue.OutMessage{ID: "m", Body: "again"})
	first := s.pollOne(t, url, queue.ReceiveOptions{VisibilityTimeout: time.Minute}, 3*s.u)
	wait := 10 * s.u
	if wait > queue.MaxWait {
		wait = queue.MaxWait
	}
	done := make(chan []queue.Message, 1)
	go func() {
		msgs, err := s.q.Receive(s.ctx(t), url, queue.ReceiveOptions{Wait: wait})
		if err != nil {
			t.Errorf("Receive: %v", err)
		}
		done <- msgs
	}()
	time.Sleep(s.u / 2)
	if err := s.q.ChangeVisibility(s.ctx(t), url, first.ReceiptHandle, 0); err != nil {
		t.Fatalf("ChangeVisibility: %v", err)
	}
	msgs := <-done
	if len(msgs) != 1 || msgs[0].MessageID != first.MessageID {
		t.Fatalf("long poll returned %+v, want the message made visible during the wait", msgs)
	}
}

func testConcurrentReceivers(t *testing.T, s *suite) {
	url := s.ensure(t, "conc", queue.QueueSpec{})
	const n, receivers = 30, 5
	if _, err := queue.SendAll(s.ctx(t), s.q, url, entries(n, "c")); err != nil {
		t.Fatalf("SendAll: %v", err)
	}
	var (
		mu    sync.Mutex
		count = map[string]int{}
		wg    sync.WaitGroup
	)
	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(count)
	}
	deadline := time.Now().Add(10 * s.u)
	for i := 0; i < receivers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for total() < n && time.Now().Before(deadline) {
				msgs, err := s.q.Receive(s.ctx(t), url, queue.ReceiveOptions{Max: 3, VisibilityTimeout: time.Minute})
				if err != nil {
					t.Errorf("Receive: %v", err)
					return
				}
				mu.Lock()
				for _, m := range msgs {
					count[m.MessageID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(count) != n {
		t.Fatalf("received %d distinct messages, want %d", len(count), n)
	}
	for id, c := range count {
		if c != 1 {
			t.Errorf("message %s delivered %d times within its visibility timeout", id, c)
		}
	}
}

func testDepth(t *testing.T, s *suite) {
	url := s.ensure(t, "depth", queue.QueueSpec{})
	if err := waitDepth(t, s, url, 0, 0); err != nil {
		t.Fatal(err)
	}
	s.send(t, url, entries(3, "d")...)
	if err := waitDepth(t, s, url, 3, 0); err != nil {
		t.Fatal(err)
	}
	var got []queue.Message
	deadline := time.Now().Add(3 * s.u)
	for len(got) < 2 && time.Now().Before(deadline) {
		got = append(got, s.receive(t, url, queue.ReceiveOptions{Max: 2 - len(got), VisibilityTimeout: time.Minute})...)
	}
	if len(got) != 2 {
		t.Fatalf("received %d messages, want 2", len(got))
	}
	if err := waitDepth(t, s, url, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.q.Delete(s.ctx(t), url, got[0].ReceiptHandle); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := waitDepth(t, s, url, 1, 1); err != nil {
		t.Fatal(err)
	}
}

// waitDepth polls Depth (the counts are approximate, and may lag) until it
// reports the wanted counts, for up to 3 time units.
func waitDepth(t *testing.T, s *suite, url string, visible, inFlight int) error {
	t.Helper()
	deadline := time.Now().Add(3 * s.u)
	for {
		v, f, err := s.q.Depth(s.ctx(t), url)
		if err != nil {
			t.Fatalf("Depth: %v", err)
		}
		if v == visible && f == inFlight {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Depth = (%d visible, %d in flight), want (%d, %d)", v, f, visible, inFlight)
		}
		time.Sleep(s.u / 10)
	}
}

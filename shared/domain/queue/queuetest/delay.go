package queuetest

import (
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
)

// The time contract of the queue port: a message sent with a delay is never
// received before the delay has passed, counted from before the send call,
// whether or not the delay is a whole number of the adapter's time unit (an
// adapter over SQS rounds it up to whole seconds, never down), whether the
// receive is a short or a long poll, and for each entry of a batch that
// mixes delays. The relay relies on it: it sends a row due later with
// queue.DelayUntil and counts on the queue not to deliver it early.

// testDelayNeverEarly sends one batch whose entries have delays below one
// time unit, of one unit and a half, and none, and short-polls until all
// arrived: no entry arrives before its delay.
func testDelayNeverEarly(t *testing.T, s *suite) {
	url := s.ensure(t, "delay-early", queue.QueueSpec{VisibilityTimeout: 10 * s.u})
	delays := map[string]time.Duration{"none": 0, "half": s.u / 2, "one-and-half": s.u + s.u/2}
	var msgs []queue.OutMessage
	for id, d := range delays {
		msgs = append(msgs, queue.OutMessage{ID: id, Body: id, Delay: d})
	}
	start := time.Now()
	res, err := s.q.SendBatch(s.ctx(t), url, msgs)
	if err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("entry %s: %v", r.ID, r.Err)
		}
	}
	got := map[string]time.Duration{}
	deadline := start.Add(s.u*3/2 + 5*s.u)
	for len(got) < len(delays) && time.Now().Before(deadline) {
		for _, m := range s.receive(t, url, queue.ReceiveOptions{Max: queue.MaxBatch}) {
			got[m.Body] = time.Since(start)
		}
		time.Sleep(s.u / 20)
	}
	for id, d := range delays {
		at, ok := got[id]
		switch {
		case !ok:
			t.Errorf("message %q (delay %s) not received within %s", id, d, deadline.Sub(start))
		case at < d:
			t.Errorf("message %q received %s after the send began, before its %s delay", id, at, d)
		}
	}
}

// testDelayLongPoll starts a long poll right after sending a delayed
// message: the poll may return it only once its delay has passed (an
// adapter whose long poll does not wake on a message becoming visible
// returns empty, and the next receive has it).
func testDelayLongPoll(t *testing.T, s *suite) {
	url := s.ensure(t, "delay-poll", queue.QueueSpec{VisibilityTimeout: 10 * s.u})
	delay := s.u + s.u/2
	start := time.Now()
	s.send(t, url, queue.OutMessage{ID: "m", Body: "later", Delay: delay})
	got := s.receive(t, url, queue.ReceiveOptions{Wait: 3 * s.u})
	if len(got) == 0 {
		got = s.poll(t, url, queue.ReceiveOptions{}, 4*s.u)
	}
	elapsed := time.Since(start)
	if len(got) != 1 {
		t.Fatalf("received %d messages within %s, want 1", len(got), elapsed)
	}
	if elapsed < delay {
		t.Fatalf("delayed message received %s after the send began, before its %s delay", elapsed, delay)
	}
}

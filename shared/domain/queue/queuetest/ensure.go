package queuetest

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

func testRedriveToDLQ(t *testing.T, s *suite) {
	dlq := s.ensure(t, "dlq", queue.QueueSpec{})
	src := s.ensure(t, "src", queue.QueueSpec{VisibilityTimeout: time.Hour, MaxReceiveCount: 2, DeadLetterQueueURL: dlq})
	attrs := map[string]string{"event_type": "saga.advance", "saga_id": "s-42"}
	res := s.send(t, src, queue.OutMessage{ID: "poison", Body: `{"saga":"s-42"}`, Attributes: attrs})

	for want := 1; want <= 2; want++ {
		m := s.pollOne(t, src, queue.ReceiveOptions{}, 3*s.u)
		if m.ReceiveCount != want {
			t.Fatalf("receive %d: ReceiveCount = %d", want, m.ReceiveCount)
		}
		if err := s.q.ChangeVisibility(s.ctx(t), src, m.ReceiptHandle, 0); err != nil {
			t.Fatalf("ChangeVisibility(0): %v", err)
		}
	}
	// The third delivery would exceed MaxReceiveCount: the message moves.
	if got := s.poll(t, src, queue.ReceiveOptions{Max: 10}, 2*s.u); len(got) != 0 {
		t.Fatalf("source delivered %+v after MaxReceiveCount deliveries", got)
	}
	m := s.pollOne(t, dlq, queue.ReceiveOptions{Max: 10}, 3*s.u)
	if m.MessageID != res[0].MessageID {
		t.Errorf("DLQ MessageID = %q, want %q (kept from the source)", m.MessageID, res[0].MessageID)
	}
	if m.Body != `{"saga":"s-42"}` {
		t.Errorf("DLQ Body = %q", m.Body)
	}
	if !sameAttrs(m.Attributes, attrs) {
		t.Errorf("DLQ Attributes = %v, want %v", m.Attributes, attrs)
	}
	if err := waitDepth(t, s, src, 0, 0); err != nil {
		t.Errorf("source: %v", err)
	}
}

func testEnsureIdempotent(t *testing.T, s *suite) {
	ctx := s.ctx(t)
	dlqSpec := queue.QueueSpec{Name: uniqueName(t, "idem-dlq")}
	dlq1, err := s.q.Ensure(ctx, dlqSpec)
	if err != nil {
		t.Fatalf("Ensure dlq: %v", err)
	}
	dlq2, err := s.q.Ensure(ctx, dlqSpec)
	if err != nil || dlq2 != dlq1 {
		t.Fatalf("second Ensure = %q, %v; want %q, nil", dlq2, err, dlq1)
	}
	if !strings.HasSuffix(dlq1, "/"+dlqSpec.Name) {
		t.Errorf("URL %q does not end with the queue name %q", dlq1, dlqSpec.Name)
	}
	spec := queue.QueueSpec{Name: uniqueName(t, "idem"), VisibilityTimeout: 5 * time.Minute, MaxReceiveCount: 3, DeadLetterQueueURL: dlq1}
	u1, err := s.q.Ensure(ctx, spec)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	u2, err := s.q.Ensure(ctx, spec)
	if err != nil || u2 != u1 {
		t.Fatalf("second Ensure = %q, %v; want %q, nil", u2, err, u1)
	}
	// The queue works after the second Ensure.
	s.send(t, u2, queue.OutMessage{ID: "m", Body: "after ensure"})
	if m := s.pollOne(t, u1, queue.ReceiveOptions{}, 3*s.u); m.Body != "after ensure" {
		t.Errorf("Body = %q", m.Body)
	}
}

func testEnsureInvalid(t *testing.T, s *suite) {
	ctx := s.ctx(t)
	for _, spec := range []queue.QueueSpec{
		{Name: ""},
		{Name: "bad name"},
		{Name: "q.fifo"},
		{Name: strings.Repeat("q", 81)},
		{Name: "q", MaxReceiveCount: 3},
		{Name: "q", VisibilityTimeout: -time.Second},
	} {
		_, err := s.q.Ensure(ctx, spec)
		wantKind(t, "Ensure("+spec.Name+")", err, apperr.Invalid)
	}
	existing := s.ensure(t, "exists", queue.QueueSpec{})
	_, err := s.q.Ensure(ctx, queue.QueueSpec{Name: uniqueName(t, "nodlq"), MaxReceiveCount: 2, DeadLetterQueueURL: missingURL(t, existing)})
	wantKind(t, "Ensure with a missing dead-letter queue", err, apperr.NotFound)
}

func testMissingQueue(t *testing.T, s *suite) {
	ctx := s.ctx(t)
	url := missingURL(t, s.ensure(t, "exists", queue.QueueSpec{}))
	_, err := s.q.SendBatch(ctx, url, entries(1, "m"))
	wantKind(t, "SendBatch to a missing queue", err, apperr.NotFound)
	_, err = s.q.Receive(ctx, url, queue.ReceiveOptions{})
	wantKind(t, "Receive from a missing queue", err, apperr.NotFound)
	_, _, err = s.q.Depth(ctx, url)
	wantKind(t, "Depth of a missing queue", err, apperr.NotFound)
}

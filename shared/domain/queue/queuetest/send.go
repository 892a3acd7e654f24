package queuetest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

func entries(n int, prefix string) []queue.OutMessage {
	out := make([]queue.OutMessage, n)
	for i := range out {
		out[i] = queue.OutMessage{ID: fmt.Sprintf("e%d", i), Body: fmt.Sprintf(`{"%s":%d}`, prefix, i)}
	}
	return out
}

func testSendBatchOne(t *testing.T, s *suite) {
	url := s.ensure(t, "one", queue.QueueSpec{})
	before := time.Now()
	res := s.send(t, url, queue.OutMessage{ID: "only", Body: `{"order":"o-1"}`})
	after := time.Now()

	m := s.pollOne(t, url, queue.ReceiveOptions{Max: 10}, 5*s.u)
	if m.MessageID != res[0].MessageID {
		t.Errorf("MessageID = %q, want %q", m.MessageID, res[0].MessageID)
	}
	if m.Body != `{"order":"o-1"}` {
		t.Errorf("Body = %q", m.Body)
	}
	if m.ReceiptHandle == "" {
		t.Error("empty ReceiptHandle")
	}
	if m.ReceiveCount != 1 {
		t.Errorf("ReceiveCount = %d, want 1", m.ReceiveCount)
	}
	// SentAt has millisecond precision.
	if m.SentAt.Before(before.Add(-time.Millisecond)) || m.SentAt.After(after.Add(time.Millisecond)) {
		t.Errorf("SentAt = %v, want within [%v, %v]", m.SentAt, before, after)
	}
}

func testSendBatchTen(t *testing.T, s *suite) {
	url := s.ensure(t, "ten", queue.QueueSpec{})
	msgs := entries(10, "n")
	res := s.send(t, url, msgs...)
	ids := map[string]string{} // message id -> body
	for i, r := range res {
		if _, dup := ids[r.MessageID]; dup {
			t.Fatalf("duplicate MessageID %q", r.MessageID)
		}
		ids[r.MessageID] = msgs[i].Body
	}
	got := map[string]string{}
	deadline := time.Now().Add(5 * s.u)
	for len(got) < 10 && time.Now().Before(deadline) {
		for _, m := range s.poll(t, url, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Minute}, s.u) {
			if _, dup := got[m.MessageID]; dup {
				t.Fatalf("message %q delivered twice within its visibility timeout", m.MessageID)
			}
			got[m.MessageID] = m.Body
		}
	}
	if len(got) != 10 {
		t.Fatalf("received %d distinct messages, want 10", len(got))
	}
	for id, body := range ids {
		if got[id] != body {
			t.Errorf("message %s body = %q, want %q", id, got[id], body)
		}
	}
}

func testSendBatchInvalidWhole(t *testing.T, s *suite) {
	url := s.ensure(t, "inv", queue.QueueSpec{})
	dup := entries(3, "d")
	dup[2].ID = dup[0].ID
	badID := entries(2, "b")
	badID[1].ID = "not ok!"
	big := strings.Repeat("x", 100*1024)
	tooBig := []queue.OutMessage{{ID: "a", Body: big}, {ID: "b", Body: big}, {ID: "c", Body: big}}
	cases := []struct {
		name string
		msgs []queue.OutMessage
	}{
		{"eleven entries", entries(11, "e")},
		{"no entries", nil},
		{"duplicate ids", dup},
		{"bad id", badID},
		{"batch over 256 KiB", tooBig},
	}
	for _, tc := range cases {
		res, err := s.q.SendBatch(s.ctx(t), url, tc.msgs)
		wantKind(t, "SendBatch "+tc.name, err, apperr.Invalid)
		if res != nil {
			t.Errorf("SendBatch %s returned results %+v with its error", tc.name, res)
		}
	}
	if msgs := s.receive(t, url, queue.ReceiveOptions{Max: 10, Wait: s.u}); len(msgs) != 0 {
		t.Fatalf("rejected batches delivered %d messages", len(msgs))
	}
}

func testSendBatchInvalidEntry(t *testing.T, s *suite) {
	url := s.ensure(t, "inventry", queue.QueueSpec{})
	attrs := map[string]string{}
	for i := 0; i < 11; i++ {
		attrs[fmt.Sprintf("a%d", i)] = "v"
	}
	msgs := []queue.OutMessage{
		{ID: "ok1", Body: "first"},
		{ID: "empty", Body: ""},
		{ID: "ok2", Body: "second"},
		{ID: "attrs", Body: "too many attributes", Attributes: attrs},
		{ID: "nul", Body: "a\x00b"},
	}
	res, err := s.q.SendBatch(s.ctx(t), url, msgs)
	if err != nil {
		t.Fatalf("SendBatch: %v", err)
	}
	if len(res) != len(msgs) {
		t.Fatalf("got %d results, want %d", len(res), len(msgs))
	}
	for i, r := range res {
		if r.ID != msgs[i].ID {
			t.Errorf("result %d ID = %q, want %q", i, r.ID, msgs[i].ID)
		}
		if strings.HasPrefix(r.ID, "ok") {
			if r.Err != nil || r.MessageID == "" {
				t.Errorf("result %q = %+v, want success", r.ID, r)
			}
			continue
		}
		wantKind(t, "entry "+r.ID, r.Err, apperr.Invalid)
	}
	got := map[string]bool{}
	deadline := time.Now().Add(3 * s.u)
	for len(got) < 2 && time.Now().Before(deadline) {
		for _, m := range s.poll(t, url, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Minute}, s.u) {
			got[m.Body] = true
		}
	}
	if len(got) != 2 || !got["first"] || !got["second"] {
		t.Fatalf("received bodies %v, want exactly first and second", got)
	}
}

func testSendAllChunks(t *testing.T, s *suite) {
	url := s.ensure(t, "all", queue.QueueSpec{})
	msgs := entries(23, "all")
	res, err := queue.SendAll(s.ctx(t), s.q, url, msgs)
	if err != nil {
		t.Fatalf("SendAll: %v", err)
	}
	if len(res) != 23 {
		t.Fatalf("SendAll returned %d results, want 23", len(res))
	}
	for i, r := range res {
		if r.ID != msgs[i].ID || r.Err != nil || r.MessageID == "" {
			t.Errorf("result %d = %+v, want success for %q", i, r, msgs[i].ID)
		}
	}
	if err := waitDepth(t, s, url, 23, 0); err != nil {
		t.Fatal(err)
	}
}

func testAttributesRoundTrip(t *testing.T, s *suite) {
	url := s.ensure(t, "attrs", queue.QueueSpec{})
	full := map[string]string{
		"event_type": "saga.advance", "saga.id": "s-1", "Order-ID": "o-1", "trace_id": "00-abc-01",
		"unicode": "заказ ✓ 😀", "json": `{"a":[1,2]}`, "spaces": "  padded  ", "n": "42",
		"multi_line": "a\nb", "x": "y",
	}
	s.send(t, url,
		queue.OutMessage{ID: "full", Body: "full", Attributes: full},
		queue.OutMessage{ID: "none", Body: "none"},
	)
	seen := 0
	deadline := time.Now().Add(3 * s.u)
	for seen < 2 && time.Now().Before(deadline) {
		for _, m := range s.poll(t, url, queue.ReceiveOptions{Max: 10, VisibilityTimeout: time.Minute}, s.u) {
			seen++
			want := map[string]string(nil)
			if m.Body == "full" {
				want = full
			}
			if !sameAttrs(m.Attributes, want) {
				t.Errorf("message %q attributes = %v, want %v", m.Body, m.Attributes, want)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("received %d messages, want 2", seen)
	}
}

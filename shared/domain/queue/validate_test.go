package queue

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

func msg(id string) OutMessage { return OutMessage{ID: id, Body: "body-" + id} }

func batchOf(n int) []OutMessage {
	out := make([]OutMessage, n)
	for i := range out {
		out[i] = msg(fmt.Sprintf("e%d", i))
	}
	return out
}

func TestCheckBatchWhole(t *testing.T) {
	big := strings.Repeat("x", 100*1024)
	tests := []struct {
		name    string
		msgs    []OutMessage
		wantErr bool
	}{
		{"one", batchOf(1), false},
		{"ten", batchOf(10), false},
		{"empty", nil, true},
		{"eleven", batchOf(11), true},
		{"duplicate id", []OutMessage{msg("a"), msg("b"), msg("a")}, true},
		{"empty id", []OutMessage{msg("")}, true},
		{"id with dot", []OutMessage{msg("a.b")}, true},
		{"id with space", []OutMessage{msg("a b")}, true},
		{"id 80 chars", []OutMessage{msg(strings.Repeat("a", 80))}, false},
		{"id 81 chars", []OutMessage{msg(strings.Repeat("a", 81))}, true},
		{"id charset", []OutMessage{msg("AZaz09_-")}, false},
		{"two large fit", []OutMessage{{ID: "a", Body: big}, {ID: "b", Body: big}}, false},
		{"three large too big together", []OutMessage{{ID: "a", Body: big}, {ID: "b", Body: big}, {ID: "c", Body: big}}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entryErrs, err := CheckBatch(tc.msgs)
			if tc.wantErr {
				if !apperr.Is(err, apperr.Invalid) {
					t.Fatalf("CheckBatch err = %v, want Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckBatch err = %v, want nil", err)
			}
			if len(entryErrs) != len(tc.msgs) {
				t.Fatalf("len(entryErrs) = %d, want %d", len(entryErrs), len(tc.msgs))
			}
			for i, e := range entryErrs {
				if e != nil {
					t.Errorf("entryErrs[%d] = %v, want nil", i, e)
				}
			}
		})
	}
}

func TestCheckMessage(t *testing.T) {
	attrs := func(n int) map[string]string {
		m := make(map[string]string, n)
		for i := 0; i < n; i++ {
			m[fmt.Sprintf("a%d", i)] = "v"
		}
		return m
	}
	tests := []struct {
		name  string
		m     OutMessage
		valid bool
	}{
		{"plain", OutMessage{ID: "x", Body: "{}"}, true},
		{"unicode body", OutMessage{ID: "x", Body: "заказ ✓ \t\r\n 😀"}, true},
		{"empty body", OutMessage{ID: "x", Body: ""}, false},
		{"NUL in body", OutMessage{ID: "x", Body: "a\x00b"}, false},
		{"control char", OutMessage{ID: "x", Body: "a\x01b"}, false},
		{"invalid utf8", OutMessage{ID: "x", Body: "a\xffb"}, false},
		{"U+FFFE", OutMessage{ID: "x", Body: "a\uFFFEb"}, false},
		{"U+FFFD ok", OutMessage{ID: "x", Body: "a\uFFFDb"}, true},
		{"body at limit", OutMessage{ID: "x", Body: strings.Repeat("x", MaxMessageBytes)}, true},
		{"body over limit", OutMessage{ID: "x", Body: strings.Repeat("x", MaxMessageBytes+1)}, false},
		{"attributes count size", OutMessage{ID: "x", Body: strings.Repeat("x", MaxMessageBytes-len("kStringv")), Attributes: map[string]string{"k": "v"}}, true},
		{"attributes push over limit", OutMessage{ID: "x", Body: strings.Repeat("x", MaxMessageBytes-len("kStringv")+1), Attributes: map[string]string{"k": "v"}}, false},
		{"ten attributes", OutMessage{ID: "x", Body: "b", Attributes: attrs(10)}, true},
		{"eleven attributes", OutMessage{ID: "x", Body: "b", Attributes: attrs(11)}, false},
		{"dotted name", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"saga.id": "1"}}, true},
		{"leading dot", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{".a": "1"}}, false},
		{"trailing dot", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"a.": "1"}}, false},
		{"double dot", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"a..b": "1"}}, false},
		{"AWS prefix", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"aws.trace": "1"}}, false},
		{"Amazon prefix", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"Amazon.x": "1"}}, false},
		{"name with space", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"a b": "1"}}, false},
		{"empty value", OutMessage{ID: "x", Body: "b", Attributes: map[string]string{"a": ""}}, false},
		{"delay max", OutMessage{ID: "x", Body: "b", Delay: MaxDelay}, true},
		{"delay over max", OutMessage{ID: "x", Body: "b", Delay: MaxDelay + time.Second}, false},
		{"negative delay", OutMessage{ID: "x", Body: "b", Delay: -time.Second}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckMessage(tc.m)
			if tc.valid && err != nil {
				t.Fatalf("CheckMessage = %v, want nil", err)
			}
			if !tc.valid && !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("CheckMessage = %v, want Invalid", err)
			}
		})
	}
}

func TestCheckBatchPerEntry(t *testing.T) {
	msgs := []OutMessage{msg("ok1"), {ID: "bad", Body: ""}, msg("ok2")}
	entryErrs, err := CheckBatch(msgs)
	if err != nil {
		t.Fatalf("CheckBatch err = %v, want nil", err)
	}
	for i, want := range []bool{false, true, false} {
		if got := entryErrs[i] != nil; got != want {
			t.Errorf("entryErrs[%d] = %v, want error %v", i, entryErrs[i], want)
		}
	}
	if !apperr.Is(entryErrs[1], apperr.Invalid) {
		t.Errorf("entryErrs[1] kind = %v, want Invalid", apperr.KindOf(entryErrs[1]))
	}
}

func TestCheckReceive(t *testing.T) {
	tests := []struct {
		name    string
		opts    ReceiveOptions
		wantMax int
		valid   bool
	}{
		{"zero max means one", ReceiveOptions{}, 1, true},
		{"ten", ReceiveOptions{Max: 10, Wait: MaxWait, VisibilityTimeout: MaxVisibilityTimeout}, 10, true},
		{"eleven", ReceiveOptions{Max: 11}, 0, false},
		{"negative max", ReceiveOptions{Max: -1}, 0, false},
		{"wait too long", ReceiveOptions{Max: 1, Wait: MaxWait + time.Second}, 0, false},
		{"negative wait", ReceiveOptions{Max: 1, Wait: -time.Second}, 0, false},
		{"visibility too long", ReceiveOptions{Max: 1, VisibilityTimeout: MaxVisibilityTimeout + time.Second}, 0, false},
		{"negative visibility", ReceiveOptions{Max: 1, VisibilityTimeout: -time.Second}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CheckReceive(tc.opts)
			if !tc.valid {
				if !apperr.Is(err, apperr.Invalid) {
					t.Fatalf("CheckReceive err = %v, want Invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckReceive err = %v", err)
			}
			if got.Max != tc.wantMax {
				t.Errorf("Max = %d, want %d", got.Max, tc.wantMax)
			}
		})
	}
}

func TestCheckSpec(t *testing.T) {
	tests := []struct {
		name  string
		spec  QueueSpec
		valid bool
	}{
		{"minimal", QueueSpec{Name: "saga-commands"}, true},
		{"with dlq", QueueSpec{Name: "q", MaxReceiveCount: 5, DeadLetterQueueURL: "u"}, true},
		{"empty name", QueueSpec{}, false},
		{"fifo name", QueueSpec{Name: "q.fifo"}, false},
		{"long name", QueueSpec{Name: strings.Repeat("q", 81)}, false},
		{"negative visibility", QueueSpec{Name: "q", VisibilityTimeout: -time.Second}, false},
		{"visibility too long", QueueSpec{Name: "q", VisibilityTimeout: 13 * time.Hour}, false},
		{"count without dlq", QueueSpec{Name: "q", MaxReceiveCount: 3}, false},
		{"dlq without count", QueueSpec{Name: "q", DeadLetterQueueURL: "u"}, false},
		{"count too big", QueueSpec{Name: "q", MaxReceiveCount: 1001, DeadLetterQueueURL: "u"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSpec(tc.spec)
			if tc.valid != (err == nil) {
				t.Fatalf("CheckSpec = %v, want valid %v", err, tc.valid)
			}
			if err != nil && !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("kind = %v, want Invalid", apperr.KindOf(err))
			}
		})
	}
}

func TestCheckVisibility(t *testing.T) {
	tests := []struct {
		name   string
		handle string
		d      time.Duration
		valid  bool
	}{
		{"zero", "h", 0, true},
		{"max", "h", MaxVisibilityTimeout, true},
		{"over max", "h", MaxVisibilityTimeout + 1, false},
		{"negative", "h", -1, false},
		{"empty handle", "", time.Second, false},
		{"blank handle", "  ", time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckVisibility(tc.handle, tc.d)
			if tc.valid != (err == nil) {
				t.Fatalf("CheckVisibility = %v, want valid %v", err, tc.valid)
			}
		})
	}
}

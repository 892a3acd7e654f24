package queuetest

import (
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/text"
)

// TextRuleSamples returns strings that package textrule accepts: every edge
// of every allowed range, each alone and all together, plus seeded random
// strings drawn from the whole allowed set. The API boundary validates text
// with textrule; these are what it may let through.
func TextRuleSamples(seed int64, n int) []string {
	edges := []rune{0x9, 0xA, 0xD, 0x20, 0x7E, 0x7F, 0x80, 0x9F, 0xA0, 0x7FF, 0x800, 0xD7FF,
		0xE000, 0xFDD0, 0xFFFD, 0x10000, 0x1F600, 0xFFFFD, 0x10FFFF}
	var out []string
	var all strings.Builder
	for _, r := range edges {
		out = append(out, "x"+string(r)+"x")
		all.WriteRune(r)
	}
	out = append(out, all.String())
	ranges := [][2]rune{{0x20, 0xD7FF}, {0xE000, 0xFFFD}, {0x10000, 0x10FFFF}}
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < n; i++ {
		var b strings.Builder
		for j := 0; j < 1+rng.Intn(24); j++ {
			rg := ranges[rng.Intn(len(ranges))]
			b.WriteRune(rg[0] + rune(rng.Int63n(int64(rg[1]-rg[0]+1))))
		}
		out = append(out, b.String())
	}
	for _, s := range out {
		if !text.Valid(s) {
			panic(fmt.Sprintf("queuetest: sample %q fails textrule", s)) // a bug in the generator
		}
	}
	return out
}

// textRuleRefused are strings textrule refuses; the adapter must refuse them
// too (as a per-entry Invalid error) rather than send them.
var textRuleRefused = []string{"a\uFFFEb", "a\uFFFFb", "a\x00b", "a\x1bb", "a\xffb", "\xed\xa0\x80"}

// RunTextRule checks that q agrees with package textrule: every sample it
// accepts is sent and received unchanged as a body and as an attribute
// value, and every refused string is refused per entry. q is a real
// adapter; url is created with Ensure.
func RunTextRule(t *testing.T, q queue.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	url, err := q.Ensure(ctx, queue.QueueSpec{Name: uniqueName(t, "text")})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	samples := TextRuleSamples(1, 60)
	want := map[string]string{} // entry id → the text sent in body and attribute
	for start := 0; start < len(samples); start += queue.MaxBatch {
		var batch []queue.OutMessage
		for i := start; i < min(start+queue.MaxBatch, len(samples)); i++ {
			id := fmt.Sprintf("s%d", i)
			want[id] = samples[i]
			batch = append(batch, queue.OutMessage{ID: id, Body: samples[i], Attributes: map[string]string{"text": samples[i], "entry": id}})
		}
		res, err := q.SendBatch(ctx, url, batch)
		if err != nil {
			t.Fatalf("SendBatch: %v", err)
		}
		for _, r := range res {
			if r.Err != nil {
				t.Errorf("entry %s (%+q) refused though textrule accepts it: %v", r.ID, want[r.ID], r.Err)
			}
		}
	}
	got := map[string]bool{}
	// A short visibility timeout: under load a Receive whose response the
	// client gave up on (and retried) leaves its messages invisible for that
	// long, so they must come back well before the deadline (CI under -race
	// once missed one batch of 10 with a one-minute timeout).
	deadline := time.Now().Add(60 * time.Second)
	for len(got) < len(want) && time.Now().Before(deadline) {
		msgs, err := q.Receive(ctx, url, queue.ReceiveOptions{Max: queue.MaxBatch, Wait: time.Second, VisibilityTimeout: 5 * time.Second})
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		for _, m := range msgs {
			id := m.Attributes["entry"]
			if w, ok := want[id]; !ok {
				t.Errorf("unexpected message %+v", m)
			} else if m.Body != w || m.Attributes["text"] != w {
				t.Errorf("entry %s: body %+q / attribute %+q, sent %+q", id, m.Body, m.Attributes["text"], w)
			}
			got[id] = true
			if err := q.Delete(ctx, url, m.ReceiptHandle); err != nil {
				t.Errorf("Delete: %v", err)
			}
		}
	}
	if len(got) != len(want) {
		t.Errorf("received %d of %d messages", len(got), len(want))
	}
	for i, s := range textRuleRefused {
		for _, m := range []queue.OutMessage{{ID: "bad", Body: s}, {ID: "bad", Body: "ok", Attributes: map[string]string{"text": s}}} {
			res, err := q.SendBatch(ctx, url, []queue.OutMessage{m, {ID: "good", Body: "fine"}})
			if err != nil {
				t.Fatalf("refused %d: SendBatch: %v", i, err)
			}
			for _, r := range res {
				if (r.ID == "bad") != (r.Err != nil) {
					t.Errorf("refused %d (%+q): entry %s err = %v", i, s, r.ID, r.Err)
				}
			}
		}
	}
}

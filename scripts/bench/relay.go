package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"ordersaga/shared/localwiring"
	"ordersaga/shared/outbox"
	"ordersaga/shared/queue"
	"ordersaga/shared/relay"
	"ordersaga/shared/resilience"
	"ordersaga/shared/sqlitestore"
	"ordersaga/shared/store"
	"ordersaga/shared/ymq"
)

// benchRelay publishes n committed outbox rows to a kumo queue through the
// relay, and sends n messages of the same size with raw SendMessageBatch
// calls to another queue on the same server.
func benchRelay(endpoint string, n int) []row {
	ctx := context.Background()
	q, err := ymq.New(ymq.Config{Endpoint: endpoint, AccessKeyID: "bench", SecretAccessKey: "bench"})
	must(err)
	suffix := strings.ReplaceAll(uuid.NewString()[:8], "-", "")
	relayURL, err := q.Ensure(ctx, queue.QueueSpec{Name: "bench-relay-" + suffix})
	must(err)
	rawURL, err := q.Ensure(ctx, queue.QueueSpec{Name: "bench-raw-" + suffix})
	must(err)

	dir, err := os.MkdirTemp("", "bench-relay")
	must(err)
	defer os.RemoveAll(dir)
	s, err := sqlitestore.Open(ctx, filepath.Join(dir, "relay.db"), sqlitestore.Options{})
	must(err)
	defer s.Close()
	payload := []byte(`{"saga_id":"` + uuid.NewString() + `","reason":"created"}`)
	now := time.Now().UTC()
	for start := 0; start < n; start += 500 {
		must(s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			for i := start; i < start+500 && i < n; i++ {
				id := localwiring.NewID() // as the local target names rows (time-ordered)
				if err := tx.InsertOutbox(ctx, outbox.Event{ID: id, AggregateType: "saga", AggregateID: id,
					EventType: outbox.TypeSagaAdvance, Destination: outbox.DestSagaCommands, Payload: payload,
					Metadata: map[string]string{outbox.AttrOrderID: id, outbox.AttrSagaID: id, outbox.AttrIdempotencyKey: id},
					Status:   outbox.StatusPending, NextAttemptAt: now, CreatedAt: now, Version: 1}); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	r, err := relay.New(relay.Config{Store: s, Queue: q, URLs: map[string]string{outbox.DestSagaCommands: relayURL}, Owner: "bench",
		BatchSize: 100, MaxAttempts: 10, Lease: time.Minute, Backoff: resilience.Backoff{Base: time.Second, Cap: time.Minute},
		NewID: uuid.NewString, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	must(err)
	t0 := time.Now()
	rep, err := r.Run(ctx, 10*time.Minute)
	must(err)
	relayTook := time.Since(t0)
	if rep.Published != n {
		fmt.Fprintf(os.Stderr, "bench: relay published %d of %d\n", rep.Published, n)
		os.Exit(1)
	}

	msg := queue.OutMessage{Body: string(payload), Attributes: outbox.Event{ID: "x", EventType: outbox.TypeSagaAdvance,
		AggregateType: "saga", AggregateID: "x", Metadata: map[string]string{outbox.AttrOrderID: "x", outbox.AttrSagaID: "x", outbox.AttrIdempotencyKey: "x"}}.Attributes()}
	t1 := time.Now()
	for sent := 0; sent < n; {
		batch := make([]queue.OutMessage, 0, 10)
		for i := 0; i < 10 && sent+i < n; i++ {
			m := msg
			m.ID = fmt.Sprintf("m%d", i)
			batch = append(batch, m)
		}
		res, err := q.SendBatch(ctx, rawURL, batch)
		must(err)
		for _, r := range res {
			must(r.Err)
		}
		sent += len(batch)
	}
	rawTook := time.Since(t1)
	relayRate, rawRate := float64(n)/relayTook.Seconds(), float64(n)/rawTook.Seconds()
	return []row{{
		fmt.Sprintf("outbox relay to kumo (%d events, claim 100, batches of 10)", n),
		fmt.Sprintf("%.0f events/s", relayRate), fmt.Sprintf("%.0f msgs/s raw SendMessageBatch", rawRate),
		fmt.Sprintf("%.3f", relayRate/rawRate), // three decimals: the target is judged on this value
	}}
}

package relay

import (
	"context"
	"fmt"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/store"
)

// TestLoweringShardsStrandsNothing: rows stamped under OUTBOX_SHARDS=4 are
// all published by a relay configured with 1 shard (and with 2), and every
// aggregate's rows, old and new, go out in order.
func TestLoweringShardsStrandsNothing(t *testing.T) {
	for _, now := range []int{1, 2} {
		t.Run(fmt.Sprintf("4 to %d", now), func(t *testing.T) {
			f := newFixture(t)
			want := map[string][]string{}
			step := 0
			add := func(agg string, shard int) {
				id := f.newID()
				want[agg] = append(want[agg], id)
				step++
				err := f.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
					return tx.InsertOutbox(ctx, outbox.Event{ID: id, Shard: shard, AggregateType: "saga", AggregateID: agg,
						EventType: outbox.TypeSagaAdvance, Destination: outbox.DestSagaCommands, Payload: []byte(`{}`),
						Status: outbox.StatusPending, NextAttemptAt: f.clock.Now(),
						CreatedAt: f.clock.Now().Add(time.Duration(step) * time.Millisecond), Version: 1})
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			// Written under 4 shards: three rows per aggregate, every shard used.
			for a := 0; a < 8; a++ {
				for i := 0; i < 3; i++ {
					add(fmt.Sprintf("agg-%d", a), a%4)
				}
			}
			// Written after the setting dropped: the same aggregates, new shard.
			for a := 0; a < 8; a++ {
				add(fmt.Sprintf("agg-%d", a), a%now)
			}
			r := f.relay(t, "r", func(c *Config) { c.Shards = now })
			for i := 0; i < 10; i++ {
				if _, err := r.Run(context.Background(), time.Minute); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := r.Run(context.Background(), time.Minute)
			if err != nil || rep.Pending != 0 {
				t.Fatalf("after the runs: %+v, %v: rows stranded", rep, err)
			}
			counts, order := f.drain(t)
			got := map[string][]string{}
			aggOf := map[string]string{}
			for agg, ids := range want {
				for _, id := range ids {
					aggOf[id] = agg
				}
			}
			for _, id := range order {
				got[aggOf[id]] = append(got[aggOf[id]], id)
			}
			for agg, ids := range want {
				if fmt.Sprint(got[agg]) != fmt.Sprint(ids) {
					t.Errorf("%s published %v, want %v", agg, got[agg], ids)
				}
			}
			if len(counts) != 32 {
				t.Errorf("%d distinct events published, want 32", len(counts))
			}
		})
	}
}

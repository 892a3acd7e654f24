package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	ydbmeta "github.com/ydb-platform/ydb-go-sdk/v3/meta"
	"google.golang.org/grpc/metadata"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
)

// unitsCounter sums the request units YDB reports in its responses'
// x-ydb-consumed-units trailer.
type unitsCounter struct {
	mu sync.Mutex
	n  uint64
}

func (u *unitsCounter) add(md metadata.MD) {
	u.mu.Lock()
	u.n += ydbmeta.ConsumedUnits(md)
	u.mu.Unlock()
}

func (u *unitsCounter) take() uint64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := u.n
	u.n = 0
	return n
}

// measureUnits runs three store operations of one order on st (a scratch
// database) and reports the request units the server charged for each:
// an insert transaction, a snapshot read, and a read-modify-write. It
// writes one order row with a fresh id.
func measureUnits(ctx context.Context, st store.Store) line {
	var u unitsCounter
	ctx = ydbmeta.WithTrailerCallback(ctx, u.add)
	now := time.Now().UTC().Truncate(time.Microsecond)
	o := order.Order{ID: "preflight-ru-" + randomHex(6), OwnerID: "preflight", CustomerID: "preflight", Status: order.StatusPending,
		Currency: "RUB", Items: []order.Item{{SKU: "preflight", Quantity: 1, UnitPriceMinor: 100}}, TotalMinor: 100,
		CreatedAt: now, UpdatedAt: now, Version: 1}
	type op struct {
		name string
		run  func() error
	}
	ops := []op{
		{"insert order (InTx)", func() error {
			return st.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.InsertOrder(ctx, o) })
		}},
		{"read order (View)", func() error {
			return st.View(ctx, func(ctx context.Context, tx store.Tx) error { _, err := tx.GetOrder(ctx, o.ID); return err })
		}},
		{"read and update order (InTx)", func() error {
			return st.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				cur, err := tx.GetOrder(ctx, o.ID)
				if err != nil {
					return err
				}
				next := cur
				next.Status, next.Version, next.UpdatedAt = order.StatusConfirmed, cur.Version+1, now.Add(time.Millisecond)
				return tx.UpdateOrder(ctx, next, cur.Version)
			})
		}},
	}
	var parts []string
	var total uint64
	for _, op := range ops {
		if err := op.run(); err != nil {
			return bad("the scratch database refused a store operation: run the conformance line's suite for details", "%s: %v", op.name, err)
		}
		n := u.take()
		total += n
		parts = append(parts, fmt.Sprintf("%s %d RU", op.name, n))
	}
	if total == 0 {
		return line{Verdict: skip, Detail: "the server reported no consumed units (no x-ydb-consumed-units trailer): request units not measured"}
	}
	return ok("%s (the bench counts 16 YDB requests per order: docs/bench.md)", strings.Join(parts, ", "))
}

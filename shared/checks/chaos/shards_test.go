package chaos

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/wiring/app"
)

// shardUse counts, after the drain, the completed sagas' reservations that
// took units from sub-rows and the operator's rebalances and sub-row changes.
func shardUse(n *[3]int) func(context.Context, *app.App, store.Store) error {
	return func(ctx context.Context, _ *app.App, st store.Store) error {
		return st.View(ctx, func(ctx context.Context, tx store.Tx) error {
			audit, err := tx.ListAudit(ctx, 10_000)
			if err != nil {
				return err
			}
			for _, a := range audit {
				switch a.Action {
				case "stock_rebalance":
					n[1]++
				case "stock_shards":
					n[2]++
				}
			}
			done, err := tx.ListSagasByState(ctx, saga.StateCompleted, time.Time{}, 10_000)
			if err != nil {
				return err
			}
			for _, inst := range done {
				r, err := tx.GetReservation(ctx, inst.ID)
				if err != nil {
					return err
				}
				if len(r.Takes) > 0 {
					n[0]++
				}
			}
			return nil
		})
	}
}

// TestShardedRunHoldsGuarantees: with sku-a and sku-b sharded and an
// operator rebalancing and re-sharding them during the orders, sequentially
// and concurrently, every guarantee holds, including that each stock row
// and sub-row holds exactly what live reservations took from it — and
// sub-rows and the operator were really used.
func TestShardedRunHoldsGuarantees(t *testing.T) {
	for _, o := range []Options{
		{Orders: 40, Seed: 1, Sharded: true},
		{Orders: 40, Seed: 2, Sharded: true, Concurrent: true},
	} {
		t.Run(fmt.Sprintf("concurrent=%v", o.Concurrent), func(t *testing.T) {
			var used [3]int
			o.AfterDrain = shardUse(&used)
			rep := run(t, o)
			if !rep.OK() {
				var b bytes.Buffer
				rep.WriteTable(&b)
				t.Fatalf("violations:\n%s", b.String())
			}
			if !strings.Contains(rep.Mode, "sharded") {
				t.Errorf("mode %q does not name sharded", rep.Mode)
			}
			if used[0] == 0 || used[1] == 0 || used[2] <= len(shardPlan) {
				t.Errorf("%d reservations took from sub-rows, %d rebalances, %d sub-row changes: the mode was not exercised",
					used[0], used[1], used[2])
			}
			if rep.Confirmed == 0 {
				t.Errorf("no order confirmed")
			}
		})
	}
}

// TestCheckerCatchesAUnitReservedOnTheWrongSubRow: a sub-row that holds a
// reserved unit no reservation took from it is reported, though the SKU's
// totals still add up.
func TestCheckerCatchesAUnitReservedOnTheWrongSubRow(t *testing.T) {
	rep := run(t, Options{Orders: 20, Seed: 3, Sharded: true,
		AfterDrain: func(ctx context.Context, _ *app.App, st store.Store) error {
			return st.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				subs, err := tx.ListStockShards(ctx, "sku-a")
				if err != nil {
					return err
				}
				for _, sh := range subs {
					if sh.Available > 0 {
						prev := sh.Version
						sh.Available, sh.Reserved, sh.Version = sh.Available-1, sh.Reserved+1, prev+1
						return tx.PutStockShard(ctx, sh, prev)
					}
				}
				return fmt.Errorf("no sub-row of sku-a has available units")
			})
		}})
	wantViolation(t, rep, "but reservations took 0 from it")
}

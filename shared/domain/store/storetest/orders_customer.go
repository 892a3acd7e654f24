package storetest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/store"
)

var orderCustomerTests = []subtest{
	{"by_customer_pages", testOrdersByCustomerPages},
	{"by_customer_limits", testOrdersByCustomerLimits},
}

// customerOrders inserts, over several transactions and out of order,
// orders of customer c: distinct times, two with the same CreatedAt (ties
// go to the larger id), one at the epoch and one at the zero time (the
// oldest); and orders of another customer at the same times. It returns
// c's order ids newest first: the order ListOrdersByCustomer must return.
func customerOrders(t *testing.T, s store.Store, c, other string) []string {
	t.Helper()
	base := window()
	times := []time.Time{
		base.Add(3 * time.Hour), base.Add(time.Minute), base.Add(5 * time.Hour),
		base.Add(2 * time.Hour), base.Add(2 * time.Hour), epoch, {}, base.Add(4*time.Hour + time.Microsecond),
		base.Add(time.Second),
	}
	var all []order.Order
	for i, at := range times {
		all = append(all, order.Order{ID: newID("ord"), CustomerID: c, Status: order.StatusPending, CreatedAt: at, UpdatedAt: at})
		if i%3 == 0 {
			all = append(all, order.Order{ID: newID("ord"), CustomerID: other, CreatedAt: at, UpdatedAt: at})
		}
	}
	for i := 0; i < len(all); i += 4 {
		batch := all[i:min(i+4, len(all))]
		mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
			for _, o := range batch {
				if err := tx.InsertOrder(ctx, o); err != nil {
					return err
				}
			}
			return nil
		})
	}
	var mine []order.Order
	for _, o := range all {
		if o.CustomerID == c {
			mine = append(mine, o)
		}
	}
	slices.SortFunc(mine, func(a, b order.Order) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	ids := make([]string, len(mine))
	for i, o := range mine {
		ids[i] = o.ID
	}
	return ids
}

func orderIDs(os []order.Order) []string {
	out := make([]string, len(os))
	for i, o := range os {
		out[i] = o.ID
	}
	return out
}

// testOrdersByCustomerPages: paging with every page size from 1 to past the
// total returns each of the customer's orders exactly once, newest first,
// the zero time last, ties by larger id, and no other customer's; an
// update (status, UpdatedAt) keeps the order in its place.
func testOrdersByCustomerPages(t *testing.T, s store.Store) {
	c, other := newID("cust"), newID("cust")
	want := customerOrders(t, s, c, other)
	// An update rewrites the row; the order stays listed once, in place.
	mustTx(t, s, func(ctx context.Context, tx store.Tx) error {
		o, err := tx.GetOrder(ctx, want[2])
		if err != nil {
			return err
		}
		v := o.Version
		o.Status, o.UpdatedAt, o.Version = order.StatusConfirmed, odd, v+1
		return tx.UpdateOrder(ctx, o, v)
	})
	for size := 1; size <= len(want)+1; size++ {
		var got []string
		var after store.OrderCursor
		for pages := 0; ; pages++ {
			if pages > len(want)+1 {
				t.Fatalf("page size %d: more than %d pages", size, len(want)+1)
			}
			var page []order.Order
			mustView(t, s, func(ctx context.Context, tx store.Tx) (err error) {
				page, err = tx.ListOrdersByCustomer(ctx, c, after, size)
				return err
			})
			if len(page) > size {
				t.Fatalf("page size %d: got %d orders", size, len(page))
			}
			for _, o := range page {
				if o.CustomerID != c {
					t.Fatalf("page size %d: order %s of customer %q listed for %q", size, o.ID, o.CustomerID, c)
				}
			}
			got = append(got, orderIDs(page)...)
			if len(page) < size {
				break
			}
			after = store.CursorOf(page[len(page)-1])
		}
		wantEqual(t, "orders paged by "+strconv.Itoa(size), got, want)
	}
}

// testOrdersByCustomerLimits: limit <= 0 and an unknown customer list
// nothing; a cursor between two orders of the same time continues with the
// one of smaller id; a cursor past the oldest lists nothing; the full
// order is returned.
func testOrdersByCustomerLimits(t *testing.T, s store.Store) {
	c := newID("cust")
	want := customerOrders(t, s, c, newID("cust"))
	mustView(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, limit := range []int{0, -1} {
			got, err := tx.ListOrdersByCustomer(ctx, c, store.OrderCursor{}, limit)
			if err != nil {
				return err
			}
			if len(got) != 0 {
				t.Errorf("limit %d: got %d orders, want none", limit, len(got))
			}
		}
		got, err := tx.ListOrdersByCustomer(ctx, newID("nobody"), store.OrderCursor{}, 10)
		if err != nil {
			return err
		}
		if len(got) != 0 {
			t.Errorf("unknown customer: got %d orders, want none", len(got))
		}
		all, err := tx.ListOrdersByCustomer(ctx, c, store.OrderCursor{}, 100)
		if err != nil {
			return err
		}
		wantEqual(t, "all orders", orderIDs(all), want)
		for i := 0; i+1 < len(all); i++ {
			got, err := tx.ListOrdersByCustomer(ctx, c, store.CursorOf(all[i]), 1)
			if err != nil {
				return err
			}
			wantEqual(t, "the order after "+strconv.Itoa(i), orderIDs(got), want[i+1:i+2])
		}
		last, err := tx.ListOrdersByCustomer(ctx, c, store.CursorOf(all[len(all)-1]), 10)
		if err != nil {
			return err
		}
		if len(last) != 0 {
			t.Errorf("after the oldest: got %v, want none", orderIDs(last))
		}
		if all[0].CustomerID != c || all[0].Status != order.StatusPending {
			t.Errorf("first order = %+v, want customer %q, status PENDING", all[0], c)
		}
		return nil
	})
}

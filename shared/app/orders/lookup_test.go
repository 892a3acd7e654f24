package orders

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"ordersaga/shared/adapters/sqlitestore"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/transport/identity"
)

var lookupAdmin = identity.Identity{Subject: "ops", Role: identity.RoleAdmin}

func newLookupService(t *testing.T) (*Service, *fakeclock.Clock) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "orders.db"), sqlitestore.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	clk := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s, err := New(Config{Store: st, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return s, clk
}

func mustCreate(t *testing.T, s *Service, caller, key, customer string) Response {
	t.Helper()
	resp, err := s.Create(context.Background(), CreateCommand{Caller: identity.Identity{Subject: caller}, Key: key,
		Request: order.Request{CustomerID: customer, Currency: "RUB", Items: []order.Item{{SKU: "a", Quantity: 1, UnitPriceMinor: 10}}}})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestSagaCountsByWindowAndBound(t *testing.T) {
	s, clk := newLookupService(t)
	ctx := context.Background()
	mustCreate(t, s, "u", "old", "c-1")
	clk.Advance(2 * time.Hour)
	mustCreate(t, s, "u", "new-1", "c-1")
	clk.Advance(time.Minute)
	mustCreate(t, s, "u", "new-2", "c-2")
	clk.Advance(time.Minute)

	counts, err := s.SagaCounts(ctx, lookupAdmin, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != len(SagaStates) {
		t.Fatalf("got %d states, want %d", len(counts), len(SagaStates))
	}
	got := map[saga.State]StateCount{}
	for _, c := range counts {
		got[c.State] = c
	}
	if c := got[saga.StatePending]; c.Hour != 2 || c.Day != 3 || c.AtLeast {
		t.Errorf("pending = %+v, want hour 2, day 3, exact", c)
	}
	if c := got[saga.StateCompleted]; c.Hour != 0 || c.Day != 0 {
		t.Errorf("completed = %+v, want none", c)
	}
	// A scan bound of 2 stops inside the day: the counts are lower bounds.
	counts, err = s.SagaCounts(ctx, lookupAdmin, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c := counts[0]; c.State != saga.StatePending || c.Day != 2 || !c.AtLeast {
		t.Errorf("bounded pending = %+v, want day 2 at least", c)
	}
	// A day later nothing is inside either window.
	clk.Advance(25 * time.Hour)
	counts, err = s.SagaCounts(ctx, lookupAdmin, 10)
	if err != nil {
		t.Fatal(err)
	}
	if c := counts[0]; c.Hour != 0 || c.Day != 0 || c.AtLeast {
		t.Errorf("pending a day later = %+v, want none", c)
	}
}

func TestOperatorReadsRefuseNonAdminsAndBadBounds(t *testing.T) {
	s, _ := newLookupService(t)
	ctx := context.Background()
	user := identity.Identity{Subject: "u", Role: identity.RoleUser}
	if _, err := s.SagaCounts(ctx, user, 10); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("SagaCounts as user: %v, want Forbidden", err)
	}
	if _, err := s.RecentSagas(ctx, user, "", 10); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("RecentSagas as user: %v, want Forbidden", err)
	}
	if _, err := s.FindByKey(ctx, user, "u", "k"); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("FindByKey as user: %v, want Forbidden", err)
	}
	if _, _, err := s.Backlog(ctx, user); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("Backlog as user: %v, want Forbidden", err)
	}
	for _, scan := range []int{0, -1, MaxRecentScan + 1} {
		if _, err := s.SagaCounts(ctx, lookupAdmin, scan); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("SagaCounts scan %d: %v, want Invalid", scan, err)
		}
	}
}

func TestFindByKeyCustomerAndBacklog(t *testing.T) {
	s, clk := newLookupService(t)
	ctx := context.Background()
	a := mustCreate(t, s, "alice", "k-1", "c-1")
	clk.Advance(time.Second)
	mustCreate(t, s, "bob", "k-1", "c-2")
	clk.Advance(time.Second)
	c := mustCreate(t, s, "alice", "k-2", "c-1")
	clk.Advance(time.Minute)

	v, err := s.FindByKey(ctx, lookupAdmin, "alice", "k-1")
	if err != nil {
		t.Fatal(err)
	}
	if v.ID != a.OrderID || v.Correlation == nil || v.Correlation.IdempotencyKey != "k-1" {
		t.Errorf("FindByKey(alice, k-1) = %s %+v, want order %s", v.ID, v.Correlation, a.OrderID)
	}
	if _, err := s.FindByKey(ctx, lookupAdmin, "carol", "k-1"); !apperr.Is(err, apperr.NotFound) {
		t.Errorf("another caller's key: %v, want NotFound", err)
	}

	refs, err := s.RecentSagas(ctx, lookupAdmin, "c-1", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(refs) != 2 || refs[0].OrderID != c.OrderID || refs[1].OrderID != a.OrderID {
		t.Errorf("RecentSagas(c-1) = %+v, want %s then %s", refs, c.OrderID, a.OrderID)
	}

	pending, age, err := s.Backlog(ctx, lookupAdmin)
	if err != nil {
		t.Fatal(err)
	}
	if pending == 0 || age < time.Minute {
		t.Errorf("Backlog = %d rows, oldest %v; want the undispatched rows, oldest over a minute", pending, age)
	}
}

// TestListByCustomerFindsOldOrdersAndPages: a customer's first order is
// found after more than MaxRecentScan newer orders of other customers (which
// RecentSagas cannot see), pages follow Next newest first without a gap or
// repeat, the last page has no Next, and bad input is refused.
func TestListByCustomerFindsOldOrdersAndPages(t *testing.T) {
	s, clk := newLookupService(t)
	ctx := context.Background()
	var want []string // c-old's orders, newest first
	for i := range 5 {
		r := mustCreate(t, s, "u", "old-"+strconv.Itoa(i), "c-old")
		want = append([]string{r.OrderID}, want...)
		clk.Advance(time.Second)
	}
	for i := range MaxRecentScan + 1 {
		mustCreate(t, s, "u", "new-"+strconv.Itoa(i), "c-new")
		clk.Advance(time.Millisecond)
	}
	if refs, err := s.RecentSagas(ctx, lookupAdmin, "c-old", MaxRecentScan); err != nil || len(refs) != 0 {
		t.Fatalf("RecentSagas(c-old) = %d refs, %v; want none (beyond the newest %d)", len(refs), err, MaxRecentScan)
	}
	var got []string
	var after store.OrderCursor
	for pages := 1; ; pages++ {
		p, err := s.ListByCustomer(ctx, lookupAdmin, "c-old", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range p.Orders {
			if o.CustomerID != "c-old" || o.Status != order.StatusPending || o.SagaID == "" || o.CreatedAt.IsZero() {
				t.Errorf("page %d: %+v, want a pending order of c-old with its saga and time", pages, o)
			}
			got = append(got, o.OrderID)
		}
		if p.Next.IsZero() {
			if pages != 3 || len(p.Orders) != 1 {
				t.Errorf("last page is page %d with %d orders, want page 3 with 1", pages, len(p.Orders))
			}
			break
		}
		if pages > 3 {
			t.Fatal("more than 3 pages of 2 for 5 orders")
		}
		after = p.Next
	}
	if !slices.Equal(got, want) {
		t.Errorf("paged orders = %v, want %v", got, want)
	}
	if p, err := s.ListByCustomer(ctx, lookupAdmin, "c-old", store.OrderCursor{}, 5); err != nil || len(p.Orders) != 5 || !p.Next.IsZero() {
		t.Errorf("a page of exactly 5 = %d orders, next %+v, %v; want 5 and no next page", len(p.Orders), p.Next, err)
	}
	user := identity.Identity{Subject: "u", Role: identity.RoleUser}
	if _, err := s.ListByCustomer(ctx, user, "c-old", store.OrderCursor{}, 2); !apperr.Is(err, apperr.Forbidden) {
		t.Errorf("ListByCustomer as user: %v, want Forbidden", err)
	}
	for _, tc := range []struct {
		customer string
		limit    int
	}{{"", 2}, {"c-old", 0}, {"c-old", MaxCustomerPage + 1}} {
		if _, err := s.ListByCustomer(ctx, lookupAdmin, tc.customer, store.OrderCursor{}, tc.limit); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("ListByCustomer(%q, %d): %v, want Invalid", tc.customer, tc.limit, err)
		}
	}
}

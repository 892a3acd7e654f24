package adminapi_test

import (
	"maps"
	"slices"
	"testing"
)

// TestStockShardsAndRebalance: an admin spreads a SKU over sub-rows and
// rebalances it; the view sums the sub-rows and shows their number, every
// change is audited, and bad input is a 400 naming the field that changes
// nothing.
func TestStockShardsAndRebalance(t *testing.T) {
	e, path := newStockEnv(t)
	if r := e.do(t, "PUT", "/admin/stock/hot-1", "adm", `{"available":10}`); r.status != 200 || r.body["shards"] != float64(1) {
		t.Fatalf("stock set = %d %v, want 200 with 1 sub-row", r.status, r.body)
	}
	r := e.do(t, "PUT", "/admin/stock/hot-1/shards", "adm", `{"shards":4}`)
	if r.status != 200 || r.body["shards"] != float64(4) || r.body["available"] != float64(10) {
		t.Fatalf("set shards = %d %v, want 4 sub-rows holding 10", r.status, r.body)
	}
	rows := countRows(t, path)
	if rows["stock_shards"] != 4 {
		t.Errorf("stock_shards rows = %d, want 4", rows["stock_shards"])
	}
	r = e.do(t, "POST", "/admin/stock/hot-1/rebalance", "adm", ``)
	if r.status != 200 || r.body["moved"] != float64(0) {
		t.Fatalf("rebalance of an even SKU = %d %v, want 200, 0 moved", r.status, r.body)
	}
	list := e.do(t, "GET", "/admin/stock", "adm", "")
	got := list.body["stock"].([]any)[0].(map[string]any)
	if got["sku"] != "hot-1" || got["available"] != float64(10) || got["shards"] != float64(4) {
		t.Errorf("GET /admin/stock = %v, want hot-1 with 10 available over 4 sub-rows", got)
	}
	a := e.do(t, "GET", "/admin/audit?limit=10", "adm", "")
	recs, _ := a.body["audit"].([]any)
	var actions []string
	for _, x := range recs {
		actions = append(actions, x.(map[string]any)["action"].(string))
	}
	if want := []string{"stock_rebalance", "stock_shards", "stock_set"}; !slices.Equal(actions, want) {
		t.Errorf("audit actions = %v, want %v", actions, want)
	}

	for _, tc := range []struct{ method, path, body, ptr string }{
		{"PUT", "/admin/stock/hot-1/shards", `{"shards":0}`, "/shards"},
		{"PUT", "/admin/stock/hot-1/shards", `{"shards":257}`, "/shards"},
		{"PUT", "/admin/stock/hot-1/shards", `{"shards":"4"}`, "/shards"},
		{"PUT", "/admin/stock/hot-1/shards", `{}`, "/shards"},
		{"PUT", "/admin/stock/hot-1/shards", `{"shards":2,"shards":3}`, "/shards"},
		{"PUT", "/admin/stock/sku-%FF/shards", `{"shards":2}`, "/sku"},
		{"POST", "/admin/stock/sku-%FF/rebalance", ``, "/sku"},
		{"POST", "/admin/stock/hot-1/rebalance", `{"x":1}`, "/x"},
	} {
		before := countRows(t, path)
		r := e.do(t, tc.method, tc.path, "adm", tc.body)
		if r.status != 400 || !contains(pointers(r), tc.ptr) {
			t.Errorf("%s %s %s = %d %v, want 400 at %q", tc.method, tc.path, tc.body, r.status, r.body, tc.ptr)
		}
		if after := countRows(t, path); !maps.Equal(before, after) {
			t.Errorf("%s %s: rows changed %v → %v", tc.method, tc.path, before, after)
		}
	}
	if r := e.do(t, "POST", "/admin/stock/no-such/rebalance", "adm", ``); r.status != 404 {
		t.Errorf("rebalance of an unknown SKU = %d %v, want 404", r.status, r.body)
	}
	for _, rt := range [][2]string{{"PUT", "/admin/stock/hot-1/shards"}, {"POST", "/admin/stock/hot-1/rebalance"}} {
		if r := e.do(t, rt[0], rt[1], "", `{"shards":2}`); r.status != 401 {
			t.Errorf("%s %s without identity: %d", rt[0], rt[1], r.status)
		}
	}
}

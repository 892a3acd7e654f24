package handlers

import (
	"context"
	"net/http"
	"testing"
)

// TestAdminStockViewShowsSold: confirming settles the reservation and the
// stock view shows what was sold. After one confirmed order of 2 units the store has available 98, reserved
// 0, sold 2; the operator's view (GET /admin/stock, the only stock view in
// the cloud) must show the 2 sold units, or available + reserved no longer
// adds up to what the operator set and the units look lost.
func TestAdminStockViewShowsSold(t *testing.T) {
	s := newSuite(t, nil)
	o := s.post("sold-1", `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}`)
	s.pump()
	if got := s.get("/orders/" + o["id"].(string)); got["status"] != "CONFIRMED" {
		t.Fatalf("setup: order %v", got["status"])
	}
	st, err := s.app.Commands.Stock.Get(context.Background(), "sku-1")
	if err != nil || st.Available != 98 || st.Reserved != 0 || st.Sold != 2 {
		t.Fatalf("setup: store stock %+v %v", st, err)
	}
	req, _ := http.NewRequest("GET", s.srv.URL+"/admin/stock", nil)
	req.Header.Set("Authorization", "Bearer dev-admin")
	list := s.send(req, 200)
	var row map[string]any
	for _, r := range list["stock"].([]any) {
		if m := r.(map[string]any); m["sku"] == "sku-1" {
			row = m
		}
	}
	if row == nil {
		t.Fatalf("sku-1 missing from %v", list)
	}
	if row["available"] != float64(98) || row["reserved"] != float64(0) {
		t.Errorf("view %v", row)
	}
	if sold, ok := row["sold"]; !ok || sold != float64(2) {
		t.Errorf("GET /admin/stock shows %v: no sold units (want \"sold\": 2)", row)
	}
}

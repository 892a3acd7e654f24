package httpapi_test

import (
	"fmt"
	"maps"
	"testing"
)

// TestRefusesMembersThatDecodeIntoTheSameField: encoding/json matches
// member names to struct fields case-insensitively (with Unicode simple
// folding: "ſ" U+017F folds to "s", "K" U+212A to "k"), so two members that
// jsonstrict sees as distinct ("customer_id" and "CUSTOMER_ID") both land in
// one field and the last one wins, while a case-sensitive parser (a gateway,
// a log pipeline, a consumer) reads the first. That is exactly the
// two-parsers ambiguity the duplicate-member rule exists to refuse: a 400,
// and nothing written.
func TestRefusesMembersThatDecodeIntoTheSameField(t *testing.T) {
	e := newAPI(t)
	for i, tc := range []struct{ name, body string }{
		{"upper case top level", `{"customer_id":"alice","CUSTOMER_ID":"mallory","currency":"RUB","items":[{"sku":"s","quantity":1,"unit_price_minor":1}]}`},
		{"mixed case nested", `{"customer_id":"a","currency":"RUB","items":[{"sku":"s","quantity":1,"Quantity":900,"unit_price_minor":1}]}`},
		{"long s folds to s", `{"customer_id":"a","currency":"RUB","items":[{"sku":"s","\u017fku":"other","quantity":1,"unit_price_minor":1}]}`},
		{"case variant alone", `{"Customer_ID":"a","currency":"RUB","items":[{"SKU":"s","quantity":1,"unit_price_minor":1}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := e.rowCounts(t)
			r := e.post(t, fmt.Sprintf("fold-%d", i), tc.body)
			if r.status != 400 {
				t.Errorf("status %d %v, want 400: the member names are not the field names, and two of them fill one field", r.status, r.body)
			}
			if after := e.rowCounts(t); !maps.Equal(before, after) {
				t.Errorf("rows changed: %v -> %v", before, after)
			}
		})
	}
}

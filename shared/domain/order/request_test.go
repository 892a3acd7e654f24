package order

import (
	"encoding/json"
	"strings"
	"testing"

	"ordersaga/shared/domain/apperr"
)

const valid = `{"customer_id":"c-1","currency":"RUB","items":[{"sku":"sku-1","quantity":2,"unit_price_minor":1500}]}`

func TestDecodeRequestValid(t *testing.T) {
	req, err := DecodeRequestBytes([]byte(valid))
	if err != nil {
		t.Fatal(err)
	}
	if req.Total() != 3000 || req.Currency != "RUB" || len(req.Items) != 1 {
		t.Fatalf("got %+v", req)
	}
}

func TestDecodeRequestRejects(t *testing.T) {
	cases := []struct {
		name, body string
		kind       apperr.Kind
		pointer    string
	}{
		{"empty", ``, apperr.Invalid, ""},
		{"null", `null`, apperr.Invalid, "/customer_id"},
		{"array", `[]`, apperr.Invalid, ""},
		{"string quantity", strings.Replace(valid, `2,`, `"2",`, 1), apperr.Invalid, "/items/quantity"},
		{"unknown field", strings.Replace(valid, `"currency"`, `"x":1,"currency"`, 1), apperr.Invalid, "/x"},
		{"duplicate sku", `{"customer_id":"c","currency":"RUB","items":[{"sku":"a","quantity":1,"unit_price_minor":1},{"sku":"a","quantity":1,"unit_price_minor":1}]}`, apperr.Invalid, "/items/1/sku"},
		{"bad sku chars", strings.Replace(valid, `sku-1`, `sku 1`, 1), apperr.Invalid, "/items/0/sku"},
		{"huge quantity", strings.Replace(valid, `"quantity":2`, `"quantity":1000001`, 1), apperr.Invalid, "/items/0/quantity"},
		{"price overflow", strings.Replace(valid, `1500`, `99999999999999999999`, 1), apperr.Invalid, "/items/unit_price_minor"},
		{"control in customer", strings.Replace(valid, `c-1`, `c\u0001`, 1), apperr.Invalid, "/customer_id"},
		{"too large", `{"customer_id":"` + strings.Repeat("a", MaxBodyBytes) + `"}`, apperr.TooLarge, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequestBytes([]byte(tc.body))
			if got := apperr.KindOf(err); err == nil || got != tc.kind {
				t.Fatalf("err = %v (kind %v), want kind %v", err, got, tc.kind)
			}
			if tc.pointer != "" {
				found := false
				for _, f := range apperr.Fields(err) {
					found = found || f.Pointer == tc.pointer
				}
				if !found {
					t.Errorf("fields %+v lack pointer %s", apperr.Fields(err), tc.pointer)
				}
			}
		})
	}
}

func TestValidCurrency(t *testing.T) {
	for code, want := range map[string]bool{"RUB": true, "USD": true, "EUR": true, "KZT": true, "rub": false, "XYZ": false, "RU": false, "": false, "RUBB": false} {
		if ValidCurrency(code) != want {
			t.Errorf("ValidCurrency(%q) = %v", code, !want)
		}
	}
}

func TestTransitionIsFinalOnceTerminal(t *testing.T) {
	o := Order{Status: StatusPending, Version: 1}
	if !o.Transition(StatusConfirmed, "", o.CreatedAt) || o.Version != 2 {
		t.Fatal("pending → confirmed refused")
	}
	if o.Transition(StatusCancelled, "late", o.CreatedAt) || o.Status != StatusConfirmed {
		t.Fatal("a terminal status changed")
	}
}

// FuzzDecodeRequest: no input panics; an accepted request re-encodes to a
// request that is accepted again with the same total.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{valid, `{}`, `[]`, `{"customer_id":"c","currency":"USD","items":[{"sku":"a","quantity":9223372036854775807,"unit_price_minor":9223372036854775807}]}`, `{"items":null}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRequestBytes(body)
		if err != nil {
			if k := apperr.KindOf(err); k != apperr.Invalid && k != apperr.TooLarge {
				t.Fatalf("unexpected kind %v for %q", k, body)
			}
			return
		}
		if req.Total() <= 0 || req.Total() > MaxTotalMinor {
			t.Fatalf("accepted total %d", req.Total())
		}
		again, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		req2, err := DecodeRequestBytes(again)
		if err != nil || req2.Total() != req.Total() {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}

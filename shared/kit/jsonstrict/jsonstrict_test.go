package jsonstrict

import (
	"reflect"
	"testing"
)

func TestCheck(t *testing.T) {
	cases := []struct {
		name, doc, ptr string
		ok             bool
	}{
		{"object", `{"a":1,"b":[1,{"c":2}],"d":{"e":null}}`, "", true},
		{"scalar", `"x"`, "", true},
		{"same key in sibling objects", `{"items":[{"sku":"a"},{"sku":"b"}]}`, "", true},
		{"same key at two depths", `{"a":{"a":1}}`, "", true},
		{"top-level duplicate", `{"customer_id":"a","customer_id":"b"}`, "/customer_id", false},
		{"duplicate in array element", `{"items":[{"sku":"a"},{"sku":"a","sku":"b"}]}`, "/items/1/sku", false},
		{"duplicate nested", `{"filter":{"x":{"k":1,"k":2}}}`, "/filter/x/k", false},
		{"duplicate after nested value", `{"a":{"b":1},"a":2}`, "/a", false},
		{"escaped duplicate", `{"a":1,"\u0061":2}`, "/a", false},
		{"pointer escaping", `{"a/b":1,"a/b":2}`, "/a~1b", false},
		{"trailing value", `{} {}`, "", false},
		{"trailing garbage", `{}x`, "", false},
		{"empty", ``, "", false},
		{"invalid utf-8", "{\"a\":\"\xff\"}", "", false},
		{"syntax", `{"a":}`, "", false},
		{"cut after a key", `{"customer_id":`, "", false},
		{"cut after a member", `{"a":1`, "", false},
		{"cut inside an array", `[1,`, "", false},
		{"cut inside a nested object", `{"a":{"b":[1]`, "", false},
		{"surrogate pair", `{"a":"\ud83d\ude00"}`, "", true},
		{"escaped backslash before u", `{"a":"\\ud800"}`, "", true},
		{"replacement character escape", `{"a":"c\uFFFD"}`, "", true},
		{"lone high surrogate", `{"a":"c\ud800"}`, "", false},
		{"lone low surrogate", `{"a":"\uDC00x"}`, "", false},
		{"high surrogate then no low", `{"a":"\ud800\u0041"}`, "", false},
		{"lone surrogate in a key", `{"\ud800":1}`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fe := Check([]byte(c.doc))
			if (fe == nil) != c.ok {
				t.Fatalf("Check(%s) = %+v, want ok=%v", c.doc, fe, c.ok)
			}
			if fe != nil && fe.Pointer != c.ptr {
				t.Errorf("pointer %q, want %q (%s)", fe.Pointer, c.ptr, fe.Detail)
			}
		})
	}
}

// TestRewritten: every input encoding/json would rewrite to U+FFFD is
// found at its offset; nothing else is.
func TestRewritten(t *testing.T) {
	cases := []struct {
		doc string
		at  int
	}{
		{`{"k":"k\ud800"}`, 7},
		{`{"k":"k\udfff"}`, 7},
		{`"\ud83d\ud83d\ude00"`, 1},
		{`"\ud83d"`, 1},
		{"{\"k\":\"k\xff\"}", 7},
		{"\"\xfe\"", 1},
		{"\"\xed\xa0\x80\"", 1}, // a surrogate encoded in UTF-8
		{`{"k":"k\ud83d\ude00"}`, -1},
		{`{"k":"\\ud800"}`, -1},
		{`{"k":"\\\ud800"}`, 8},
		{`{"k":"\u00ff\ufffd"}`, -1},
		{`{"k":"\ud80"}`, -1}, // a syntax error, left to the decoder
	}
	for _, c := range cases {
		at, detail := Rewritten([]byte(c.doc))
		if at != c.at || (at >= 0) != (detail != "") {
			t.Errorf("Rewritten(%q) = %d %q, want %d", c.doc, at, detail, c.at)
		}
	}
}

func TestMembers(t *testing.T) {
	ms, fe := Members([]byte(` {"a": 1 , "b":{"c":[2]}} `), "")
	if fe != nil || len(ms) != 2 || ms[0].Key != "a" || string(ms[0].Raw) != "1" || string(ms[1].Raw) != `{"c":[2]}` {
		t.Fatalf("Members = %+v, %+v", ms, fe)
	}
	for doc, ptr := range map[string]string{`{"a":1,"a":2}`: "/f/a", `[1]`: "/f", `{"a":1}{}`: "/f", "{\"a\":\"\xff\"}": "/f", `{"a":"\udc00"}`: "/f"} {
		if _, fe := Members([]byte(doc), "/f"); fe == nil || fe.Pointer != ptr {
			t.Errorf("Members(%s) = %+v, want error at %q", doc, fe, ptr)
		}
	}
}

func TestCheckFields(t *testing.T) {
	type line struct {
		SKU string `json:"sku"`
		Qty int64  `json:"quantity"`
	}
	type doc struct {
		Customer string            `json:"customer_id"`
		Lines    []line            `json:"items"`
		Note     string            // no tag: its Go name
		Skipped  string            `json:"-"`
		Labels   map[string]string `json:"labels"`
	}
	typ := reflect.TypeOf(doc{})
	for _, tc := range []struct{ body, ptr string }{
		{`{"customer_id":"a","items":[{"sku":"s","quantity":1}],"Note":"n","labels":{"Any":"x"}}`, "-"},
		{`{"customer_id":null,"items":null}`, "-"},
		{`{"CUSTOMER_ID":"m"}`, "/CUSTOMER_ID"},
		{`{"items":[{"sku":"s"},{"sku":"s","Quantity":900}]}`, "/items/1/Quantity"},
		{`{"items":[{"\u017fku":"other"}]}`, "/items/0/ſku"},
		{`{"note":"lower case of an untagged field"}`, "/note"},
		{`{"-":"x"}`, "/-"},
		{`{"items":"not an array"}`, "-"}, // a type error: the decoder's to report
	} {
		fe := CheckFields([]byte(tc.body), typ)
		switch {
		case tc.ptr == "-" && fe != nil:
			t.Errorf("CheckFields(%s) = %+v, want nil", tc.body, fe)
		case tc.ptr != "-" && (fe == nil || fe.Pointer != tc.ptr):
			t.Errorf("CheckFields(%s) = %+v, want an error at %s", tc.body, fe, tc.ptr)
		}
	}
}

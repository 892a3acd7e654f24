package main

import (
	"context"
	"net/http"
	"reflect"
	"testing"
)

type req struct {
	A string `json:"a"`
}

func TestCheckSignature(t *testing.T) {
	ok := []any{
		func(context.Context, []byte) (any, error) { return nil, nil },
		func(context.Context, []byte) (*req, error) { return nil, nil },
		func(context.Context, *req) (string, error) { return "", nil },
		func(req) error { return nil },
		func() (string, error) { return "", nil },
		func(context.Context) error { return nil },
	}
	for _, f := range ok {
		if p := checkSignature(reflect.TypeOf(f)); p != "" {
			t.Errorf("%T refused: %s", f, p)
		}
	}
	bad := map[string]any{
		"no error":           func(context.Context, []byte) any { return nil },
		"error not last":     func(context.Context, []byte) (error, any) { return nil, nil },
		"two requests":       func(context.Context, []byte, string) error { return nil },
		"context second":     func([]byte, context.Context) error { return nil },
		"three results":      func() (any, any, error) { return nil, nil, nil },
		"variadic":           func(...string) error { return nil },
		"no results at all":  func(context.Context, []byte) {},
		"request is context": func(context.Context, context.Context) error { return nil },
	}
	for name, f := range bad {
		if p := checkSignature(reflect.TypeOf(f)); p == "" {
			t.Errorf("%s (%T) accepted", name, f)
		}
	}
	var _ http.HandlerFunc // the net/http styles are recognised before checkSignature
}

func TestDecodeRequest(t *testing.T) {
	ev := []byte(`{"a":"x"}`)
	for _, typ := range []reflect.Type{reflect.TypeOf([]byte(nil)), reflect.TypeOf(""), reflect.TypeOf(req{}), reflect.TypeOf(&req{})} {
		v, err := decodeRequest(typ, ev)
		if err != nil || v.Type() != typ {
			t.Errorf("%v: %v, %v", typ, v.Type(), err)
		}
	}
	if v, _ := decodeRequest(reflect.TypeOf(&req{}), ev); v.Interface().(*req).A != "x" {
		t.Error("pointer request not decoded")
	}
	if _, err := decodeRequest(reflect.TypeOf(req{}), []byte("not json")); err == nil {
		t.Error("a custom request type accepted a non-JSON event")
	}
}

func TestCallRecoversPanic(t *testing.T) {
	_, p := call(reflect.ValueOf(func() error { panic("boom") }), nil)
	if p == "" {
		t.Fatal("panic not reported")
	}
}

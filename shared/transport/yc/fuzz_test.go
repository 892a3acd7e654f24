package yc

import (
	"context"
	"reflect"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// seedAll adds every testdata sample and a few malformed inputs to f.
func seedAll(f *testing.F) {
	for _, name := range testdataFiles(f) {
		f.Add(mustRead(f, name))
	}
	for _, s := range []string{``, `{}`, `{"messages":[]}`, `{"messages":[null]}`, `[]`, `"x"`,
		queueJSON(QueueEventType, `{"message_id":"m","message_attributes":{"k":{"stringValue":"v","binary_value":"AA=="}}}`),
		timerJSON(TimerEventType, `{"trigger_id":"t","payload":"p"}`)} {
		f.Add([]byte(s))
	}
}

func FuzzDecodeQueue(f *testing.F) {
	seedAll(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := DecodeQueue(raw)
		if err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("error of kind %v: %v", apperr.KindOf(err), err)
			}
			return
		}
		enc, err := EncodeQueue("", ev.Messages)
		if err != nil {
			t.Fatalf("EncodeQueue of a decoded event: %v", err)
		}
		back, err := DecodeQueue(enc)
		if err != nil {
			t.Fatalf("DecodeQueue(EncodeQueue(ev)): %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", back, ev)
		}
	})
}

func FuzzDecodeTimer(f *testing.F) {
	seedAll(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := DecodeTimer(raw)
		if err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("error of kind %v: %v", apperr.KindOf(err), err)
			}
			return
		}
		enc, err := EncodeTimerEvent(ev)
		if err != nil {
			t.Fatalf("EncodeTimerEvent of a decoded event: %v", err)
		}
		back, err := DecodeTimer(enc)
		if err != nil {
			t.Fatalf("DecodeTimer(EncodeTimerEvent(ev)): %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(back, ev) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", back, ev)
		}
	})
}

func FuzzServeEvent(f *testing.F) {
	seedAll(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		resp, err := ServeEvent(testMux(), context.Background(), raw)
		if err != nil {
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("error of kind %v: %v", apperr.KindOf(err), err)
			}
			return
		}
		if resp.StatusCode < 200 || resp.StatusCode > 599 {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if _, err := resp.BodyBytes(); err != nil {
			t.Fatalf("response body: %v", err)
		}
	})
}

package yc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDecodeTimerSample(t *testing.T) {
	got, err := DecodeTimer(mustRead(t, "timer.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := TimerEvent{Messages: []TimerMessage{{
		EventID:   "a1s41g2n5g0o7e2i3el1",
		CreatedAt: time.Date(2019, 12, 4, 12, 5, 14, 227761000, time.UTC),
		TriggerID: "a1sfe084v4h2ebt85ji1",
		Payload:   "payload-message",
	}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}

// timerJSON returns a one-message timer event with details replaced.
func timerJSON(eventType, details string) string {
	return `{"messages":[{"event_metadata":{"event_id":"e","event_type":"` + eventType +
		`","created_at":"2024-01-02T03:04:05Z"},"details":` + details + `}]}`
}

func TestDecodeTimerMalformed(t *testing.T) {
	okDetails := `{"trigger_id":"t1","payload":"p"}`
	tests := []struct {
		name, raw, pointer string
	}{
		{"not json", `{"messages":`, ""},
		{"empty input", ``, ""},
		{"top-level array", `[]`, "/"},
		{"null", `null`, "/messages"},
		{"no messages", `{}`, "/messages"},
		{"empty messages", `{"messages":[]}`, "/messages"},
		{"messages not array", `{"messages":{}}`, "/messages"},
		{"wrong event type", timerJSON(QueueEventType, okDetails), "/messages/0/event_metadata/event_type"},
		{"missing event type", `{"messages":[{"details":` + okDetails + `}]}`, "/messages/0/event_metadata/event_type"},
		{"missing trigger id", timerJSON(TimerEventType, `{"payload":"p"}`), "/messages/0/details/trigger_id"},
		{"payload not string", timerJSON(TimerEventType, `{"trigger_id":"t","payload":{"a":1}}`), "/messages/details/payload"},
		{"trigger id number", timerJSON(TimerEventType, `{"trigger_id":7}`), "/messages/details/trigger_id"},
		{"bad created_at", strings.Replace(timerJSON(TimerEventType, okDetails), "2024-01-02T03:04:05Z", "yesterday", 1),
			"/messages/0/event_metadata/created_at"},
		{"huge batch", manyMessages(MaxMessages+1, timerJSONMsg), "/messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeTimer([]byte(tt.raw))
			wantInvalid(t, err, tt.pointer)
		})
	}
}

const timerJSONMsg = `{"event_metadata":{"event_type":"yandex.cloud.events.serverless.triggers.TimerMessage"},"details":{"trigger_id":"t"}}`

// manyMessages returns an envelope with n copies of msg.
func manyMessages(n int, msg string) string {
	return `{"messages":[` + strings.TrimSuffix(strings.Repeat(msg+",", n), ",") + `]}`
}

func TestDecodeTimerLimits(t *testing.T) {
	ev, err := DecodeTimer([]byte(manyMessages(MaxMessages, timerJSONMsg)))
	if err != nil || len(ev.Messages) != MaxMessages {
		t.Fatalf("MaxMessages batch: %d messages, err %v", len(ev.Messages), err)
	}
	// A timer without a configured payload sends no payload field.
	ev, err = DecodeTimer([]byte(timerJSON(TimerEventType, `{"trigger_id":"t"}`)))
	if err != nil || ev.Messages[0].Payload != "" {
		t.Fatalf("no payload: %+v, %v", ev, err)
	}
}

func TestEncodeTimer(t *testing.T) {
	now := time.Date(2025, 3, 1, 13, 0, 0, 5, time.FixedZone("MSK", 3*3600))
	raw := EncodeTimer("trig-1", `{"job":"relay"}`, now)
	got, err := DecodeTimer(raw)
	if err != nil {
		t.Fatalf("DecodeTimer(EncodeTimer) = %v\n%s", err, raw)
	}
	want := TimerMessage{
		EventID:   "trig-1-" + "1740823200000000005",
		CreatedAt: now.UTC(),
		TriggerID: "trig-1",
		Payload:   `{"job":"relay"}`,
	}
	if len(got.Messages) != 1 || got.Messages[0] != want {
		t.Fatalf("got %+v, want %+v", got.Messages, want)
	}
	// The envelope has the platform's shape.
	var generic struct {
		Messages []struct {
			EventMetadata map[string]string `json:"event_metadata"`
			Details       map[string]string `json:"details"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &generic); err != nil {
		t.Fatal(err)
	}
	m := generic.Messages[0]
	if m.EventMetadata["created_at"] != "2025-03-01T10:00:00.000000005Z" ||
		m.EventMetadata["event_type"] != TimerEventType || m.Details["trigger_id"] != "trig-1" {
		t.Fatalf("envelope %s", raw)
	}
	if string(EncodeTimer("trig-1", "p", now)) != string(EncodeTimer("trig-1", "p", now)) {
		t.Fatal("EncodeTimer is not deterministic")
	}
	if ev, err := DecodeTimer(EncodeTimer("", "", now)); err != nil || ev.Messages[0].TriggerID == "" {
		t.Fatalf("empty trigger id: %+v %v", ev, err)
	}
}

func TestEncodeTimerEventInvalid(t *testing.T) {
	tests := []struct {
		name    string
		ev      TimerEvent
		pointer string
	}{
		{"no messages", TimerEvent{}, "/messages"},
		{"no trigger id", TimerEvent{Messages: []TimerMessage{{Payload: "p"}}}, "/messages/0/details/trigger_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EncodeTimerEvent(tt.ev)
			wantInvalid(t, err, tt.pointer)
		})
	}
}

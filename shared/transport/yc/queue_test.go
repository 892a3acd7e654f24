package yc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// docQueueMessages is what both documented MQ samples decode to.
func docQueueMessages() []QueueMessage {
	const queue = "yrn:yc:ymq:ru-central1:21i6v06sqmsaoeon7nus:event-queue"
	return []QueueMessage{
		{
			EventID:           "cce76685-5828-4304-a83d-95643c0507a0",
			QueueID:           queue,
			CreatedAt:         time.Date(2019, 9, 24, 0, 54, 28, 980441000, time.UTC),
			MessageID:         "cce76685-5828-4304-a83d-95643c0507a0",
			Body:              "message body",
			MD5OfBody:         "d29343907090dff4cec4a9a0efb80d20",
			Attributes:        map[string]string{"SentTimestamp": "1569285804456"},
			MessageAttributes: map[string]string{"messageAttributeKey": "value"},
		},
		{
			EventID:           "1f32fd25-11fc-4c08-88e7-d871d6ffb91d",
			QueueID:           queue,
			CreatedAt:         time.Date(2019, 9, 24, 0, 54, 28, 980492000, time.UTC),
			MessageID:         "1f32fd25-11fc-4c08-88e7-d871d6ffb91d",
			Body:              "message body",
			MD5OfBody:         "d29343907090dff4cec4a9a0efb80d20",
			Attributes:        map[string]string{"SentTimestamp": "1569285806456"},
			MessageAttributes: map[string]string{"messageAttributeKey": "value"},
		},
	}
}

func TestDecodeQueueSamples(t *testing.T) {
	tests := []struct {
		file string
		want []QueueMessage
	}{
		{"queue_snake.json", docQueueMessages()},
		{"queue_camel.json", docQueueMessages()},
		{"queue_binary_attrs.json", []QueueMessage{{
			EventID:   "e1f0a7d2-3c4b-4e5f-8a9b-0c1d2e3f4a5b",
			QueueID:   "yrn:yc:ymq:ru-central1:b1g88tflru0ek1omtsu0:saga-steps",
			CreatedAt: time.Date(2025, 3, 1, 7, 0, 0, 500000000, time.UTC),
			MessageID: "7d3c2b1a-0f9e-4d8c-b7a6-554433221100",
			Body:      `{"saga_id":"0b6f2c1e-6d0c-4a55-9a3e-5f1d2b7c9e01","step":"reserve_stock"}`,
			MD5OfBody: "443a784dd2d0fb671872602aa843f004",
			Attributes: map[string]string{
				"SentTimestamp":                    "1740812400123",
				"ApproximateReceiveCount":          "3",
				"ApproximateFirstReceiveTimestamp": "1740812400500",
			},
			MessageAttributes: map[string]string{
				"saga_id": "0b6f2c1e-6d0c-4a55-9a3e-5f1d2b7c9e01",
				"empty":   "",
			},
			BinaryMessageAttributes: map[string]string{"trace": "dHJhY2U=", "trace_camel": "dHJhY2U="},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := DecodeQueue(mustRead(t, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Messages, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got.Messages, tt.want)
			}
			for _, m := range got.Messages {
				if BodyMD5(m.Body) != m.MD5OfBody {
					t.Errorf("BodyMD5(%q) = %s, sample says %s", m.Body, BodyMD5(m.Body), m.MD5OfBody)
				}
			}
		})
	}
}

// queueJSON returns a one-message queue event with the message object replaced.
func queueJSON(eventType, message string) string {
	return `{"messages":[{"event_metadata":{"event_id":"e","event_type":"` + eventType +
		`"},"details":{"queue_id":"q","message":` + message + `}}]}`
}

const queueJSONMsg = `{"event_metadata":{"event_type":"yandex.cloud.events.messagequeue.QueueMessage"},"details":{"message":{"message_id":"m","body":"b"}}}`

func TestDecodeQueueMalformed(t *testing.T) {
	okMsg := `{"message_id":"m","body":"b"}`
	tests := []struct {
		name, raw, pointer string
	}{
		{"not json", `not json`, ""},
		{"truncated", `{"messages":[{"event_metadata":`, ""},
		{"trailing garbage", queueJSON(QueueEventType, okMsg) + `x`, ""},
		{"top-level string", `"messages"`, "/"},
		{"null", `null`, "/messages"},
		{"empty messages", `{"messages":[]}`, "/messages"},
		{"message null", `{"messages":[null]}`, "/messages/0/event_metadata/event_type"},
		{"wrong event type", queueJSON(TimerEventType, okMsg), "/messages/0/event_metadata/event_type"},
		{"missing message", `{"messages":[{"event_metadata":{"event_type":"` + QueueEventType + `"},"details":{}}]}`,
			"/messages/0/details/message/message_id"},
		{"empty message id", queueJSON(QueueEventType, `{"message_id":"","body":"b"}`), "/messages/0/details/message/message_id"},
		{"body not string", queueJSON(QueueEventType, `{"message_id":"m","body":{"a":1}}`), "/messages/details/message/body"},
		{"body number", queueJSON(QueueEventType, `{"message_id":"m","body":42}`), "/messages/details/message/body"},
		{"attributes array", queueJSON(QueueEventType, `{"message_id":"m","attributes":["x"]}`), "/messages/details/message/attributes"},
		{"attribute number", queueJSON(QueueEventType, `{"message_id":"m","attributes":{"SentTimestamp":1}}`), ""},
		{"message attribute string", queueJSON(QueueEventType, `{"message_id":"m","message_attributes":{"k":"v"}}`), ""},
		{"string_value number", queueJSON(QueueEventType, `{"message_id":"m","message_attributes":{"k":{"string_value":5}}}`), ""},
		{"queue id number", `{"messages":[{"event_metadata":{"event_type":"` + QueueEventType + `"},"details":{"queue_id":1}}]}`,
			"/messages/details/queue_id"},
		{"created_at number", `{"messages":[{"event_metadata":{"event_type":"` + QueueEventType + `","created_at":1}}]}`,
			"/messages/event_metadata/created_at"},
		{"created_at year out of range", `{"messages":[{"event_metadata":{"event_type":"` + QueueEventType +
			`","created_at":"0000-01-01T00:00:00+01:00"},"details":{"message":{"message_id":"m"}}}]}`,
			"/messages/0/event_metadata/created_at"},
		{"second message bad", `{"messages":[` + queueJSONMsg + `,{"event_metadata":{"event_type":"x"}}]}`,
			"/messages/1/event_metadata/event_type"},
		{"huge batch", manyMessages(MaxMessages+1, queueJSONMsg), "/messages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeQueue([]byte(tt.raw))
			wantInvalid(t, err, tt.pointer)
		})
	}
}

func TestDecodeQueueAttributeSpellings(t *testing.T) {
	tests := []struct {
		name       string
		attr       string
		wantString map[string]string
		wantBinary map[string]string
	}{
		{"snake string", `{"data_type":"String","string_value":"s"}`, map[string]string{"k": "s"}, nil},
		{"camel string", `{"dataType":"String","stringValue":"c"}`, map[string]string{"k": "c"}, nil},
		{"snake wins over camel", `{"string_value":"s","stringValue":"c"}`, map[string]string{"k": "s"}, nil},
		{"snake binary", `{"data_type":"Binary","binary_value":"AAE="}`, nil, map[string]string{"k": "AAE="}},
		{"camel binary", `{"dataType":"Binary","binaryValue":"AAE="}`, nil, map[string]string{"k": "AAE="}},
		{"both values", `{"string_value":"s","binary_value":"AAE="}`, map[string]string{"k": "s"}, map[string]string{"k": "AAE="}},
		{"no value", `{"data_type":"String"}`, map[string]string{"k": ""}, nil},
		{"number type keeps string", `{"data_type":"Number","string_value":"12"}`, map[string]string{"k": "12"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := queueJSON(QueueEventType, `{"message_id":"m","body":"b","message_attributes":{"k":`+tt.attr+`}}`)
			ev, err := DecodeQueue([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			m := ev.Messages[0]
			if !reflect.DeepEqual(m.MessageAttributes, tt.wantString) || !reflect.DeepEqual(m.BinaryMessageAttributes, tt.wantBinary) {
				t.Fatalf("string %v binary %v, want %v %v", m.MessageAttributes, m.BinaryMessageAttributes, tt.wantString, tt.wantBinary)
			}
		})
	}
}

func TestDecodeQueueEmptyMapsAreNil(t *testing.T) {
	ev, err := DecodeQueue([]byte(queueJSON(QueueEventType, `{"message_id":"m","attributes":{},"message_attributes":{}}`)))
	if err != nil {
		t.Fatal(err)
	}
	m := ev.Messages[0]
	if m.Attributes != nil || m.MessageAttributes != nil || m.BinaryMessageAttributes != nil {
		t.Fatalf("want nil maps, got %+v", m)
	}
}

func TestEncodeQueueRoundTrip(t *testing.T) {
	for _, file := range []string{"queue_snake.json", "queue_camel.json", "queue_binary_attrs.json"} {
		t.Run(file, func(t *testing.T) {
			ev, err := DecodeQueue(mustRead(t, file))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := EncodeQueue("", ev.Messages)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(raw), "stringValue") || strings.Contains(string(raw), "binaryValue") {
				t.Fatalf("EncodeQueue must use snake_case: %s", raw)
			}
			back, err := DecodeQueue(raw)
			if err != nil {
				t.Fatalf("%v\n%s", err, raw)
			}
			if !reflect.DeepEqual(back, ev) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", back, ev)
			}
		})
	}
}

func TestEncodeQueueEnvelope(t *testing.T) {
	created := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	raw, err := EncodeQueue("yrn:yc:ymq:ru-central1:f:q", []QueueMessage{{
		EventID:                 "ev-1",
		CreatedAt:               created,
		MessageID:               "m-1",
		Body:                    `{"a":"<&>"}`,
		MD5OfBody:               BodyMD5(`{"a":"<&>"}`),
		Attributes:              map[string]string{"ApproximateReceiveCount": "1"},
		MessageAttributes:       map[string]string{"saga_id": "s-1"},
		BinaryMessageAttributes: map[string]string{"blob": "AAE="},
	}, {
		QueueID:   "other",
		MessageID: "m-2",
	}})
	if err != nil {
		t.Fatal(err)
	}
	// Compare against the documented shape, decoded generically.
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	var want any
	wantJSON := `{"messages":[
	 {"event_metadata":{"event_id":"ev-1","event_type":"yandex.cloud.events.messagequeue.QueueMessage","created_at":"2025-03-01T10:00:00Z"},
	  "details":{"queue_id":"yrn:yc:ymq:ru-central1:f:q","message":{"message_id":"m-1","md5_of_body":"` + BodyMD5(`{"a":"<&>"}`) + `",
	   "body":"{\"a\":\"<&>\"}","attributes":{"ApproximateReceiveCount":"1"},
	   "message_attributes":{"saga_id":{"data_type":"StringValue","string_value":"s-1"},"blob":{"data_type":"BinaryValue","binary_value":"AAE="}}}}},
	 {"event_metadata":{"event_type":"yandex.cloud.events.messagequeue.QueueMessage"},
	  "details":{"queue_id":"other","message":{"message_id":"m-2","body":""}}}]}`
	if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got  %s\nwant %s", raw, wantJSON)
	}
	if strings.Contains(string(raw), `\u003c`) {
		t.Errorf("HTML-escaped output: %s", raw)
	}
}

func TestEncodeQueueInvalid(t *testing.T) {
	tests := []struct {
		name    string
		msgs    []QueueMessage
		pointer string
	}{
		{"no messages", nil, "/messages"},
		{"too many", make([]QueueMessage, MaxMessages+1), "/messages"},
		{"no message id", []QueueMessage{{MessageID: "a"}, {Body: "b"}}, "/messages/1/details/message/message_id"},
		{"body not utf-8", []QueueMessage{{MessageID: "a", Body: "\xff"}}, "/messages/0/details/message/body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := EncodeQueue("q", tt.msgs)
			wantInvalid(t, err, tt.pointer)
		})
	}
}

func TestQueueErrorMessagesNameTheField(t *testing.T) {
	tests := []struct{ raw, want string }{
		{queueJSON(TimerEventType, `{"message_id":"m"}`), "messages[0].event_metadata.event_type"},
		{queueJSON(QueueEventType, `{"message_id":"m","body":1}`), "messages.details.message.body: want JSON string"},
		{queueJSON(QueueEventType, `{"body":"b"}`), "messages[0].details.message.message_id: required"},
	}
	for _, tt := range tests {
		_, err := DecodeQueue([]byte(tt.raw))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("err = %v, want it to contain %q", err, tt.want)
		}
	}
}

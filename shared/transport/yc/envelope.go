package yc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"ordersaga/shared/domain/apperr"
)

// MaxMessages is the largest number of messages accepted in one trigger
// event. The newest docs allow Message Queue trigger batches of up to 1000
// (platform-notes §2.4); anything larger is treated as malformed.
const MaxMessages = 1000

// wireMeta is the event_metadata object common to all trigger messages.
// cloud_id and folder_id are ignored on decode and omitted on encode.
type wireMeta struct {
	EventID   string `json:"event_id,omitempty"`
	EventType string `json:"event_type"`
	CreatedAt string `json:"created_at,omitempty"`
}

// newMeta builds the metadata the platform sends; a zero createdAt is omitted.
func newMeta(eventID, eventType string, createdAt time.Time) wireMeta {
	m := wireMeta{EventID: eventID, EventType: eventType}
	if !createdAt.IsZero() {
		m.CreatedAt = createdAt.UTC().Format(time.RFC3339Nano)
	}
	return m
}

// check validates the metadata of messages[i] and returns created_at in UTC
// (zero when absent).
func (m wireMeta) check(what string, i int, wantType string) (time.Time, error) {
	if m.EventType != wantType {
		return time.Time{}, invalidField(what, msgPointer(i, "/event_metadata/event_type"),
			fmt.Sprintf("want %q, got %q", wantType, m.EventType))
	}
	if m.CreatedAt == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, m.CreatedAt)
	if err != nil {
		return time.Time{}, invalidField(what, msgPointer(i, "/event_metadata/created_at"),
			fmt.Sprintf("not an RFC 3339 time: %q", m.CreatedAt))
	}
	t = t.UTC()
	if t.Year() < 0 || t.Year() > 9999 {
		return time.Time{}, invalidField(what, msgPointer(i, "/event_metadata/created_at"),
			"year out of range")
	}
	return t, nil
}

// checkCount validates the number of messages in an envelope.
func checkCount(what string, n int) error {
	switch {
	case n == 0:
		return invalidField(what, "/messages", "at least one message is required")
	case n > MaxMessages:
		return invalidField(what, "/messages",
			fmt.Sprintf("%d messages exceed the limit of %d", n, MaxMessages))
	}
	return nil
}

// marshal encodes v as compact JSON without HTML escaping, as the platform
// sends it.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "encode event")
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

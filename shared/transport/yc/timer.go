package yc

import (
	"encoding/json"
	"strconv"
	"time"
)

// TimerEventType is event_metadata.event_type of timer trigger messages.
const TimerEventType = "yandex.cloud.events.serverless.triggers.TimerMessage"

// TimerEvent is a decoded timer trigger event (platform-notes §2.1). The
// platform sends one message per firing; delivery is at least once, so
// handlers must be idempotent.
type TimerEvent struct {
	Messages []TimerMessage
}

// TimerMessage is one timer firing.
type TimerMessage struct {
	// EventID is event_metadata.event_id (may be empty in hand-made events).
	EventID string
	// CreatedAt is event_metadata.created_at in UTC; zero when absent.
	CreatedAt time.Time
	// TriggerID is details.trigger_id; never empty after DecodeTimer.
	TriggerID string
	// Payload is details.payload, the payload configured on the trigger
	// (empty when none is configured).
	Payload string
}

type wireTimerEnvelope struct {
	Messages []wireTimerMsg `json:"messages"`
}

type wireTimerMsg struct {
	EventMetadata wireMeta         `json:"event_metadata"`
	Details       wireTimerDetails `json:"details"`
}

type wireTimerDetails struct {
	TriggerID string `json:"trigger_id"`
	Payload   string `json:"payload"`
}

const timerWhat = "timer event"

// DecodeTimer decodes and validates a timer trigger event. It requires 1 to
// MaxMessages messages, each with event_type TimerEventType, a non-empty
// details.trigger_id and, if present, a string details.payload.
// Errors are apperr.Invalid and name the offending field.
func DecodeTimer(raw []byte) (TimerEvent, error) {
	var env wireTimerEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return TimerEvent{}, decodeError(timerWhat, err)
	}
	if err := checkCount(timerWhat, len(env.Messages)); err != nil {
		return TimerEvent{}, err
	}
	ev := TimerEvent{Messages: make([]TimerMessage, len(env.Messages))}
	for i, m := range env.Messages {
		created, err := m.EventMetadata.check(timerWhat, i, TimerEventType)
		if err != nil {
			return TimerEvent{}, err
		}
		if m.Details.TriggerID == "" {
			return TimerEvent{}, invalidField(timerWhat, msgPointer(i, "/details/trigger_id"), "required")
		}
		ev.Messages[i] = TimerMessage{
			EventID:   m.EventMetadata.EventID,
			CreatedAt: created,
			TriggerID: m.Details.TriggerID,
			Payload:   m.Details.Payload,
		}
	}
	return ev, nil
}

// EncodeTimerEvent encodes ev in the platform's timer envelope. It validates
// ev like DecodeTimer (apperr.Invalid), so its output always decodes back to ev.
func EncodeTimerEvent(ev TimerEvent) ([]byte, error) {
	if err := checkCount(timerWhat, len(ev.Messages)); err != nil {
		return nil, err
	}
	env := wireTimerEnvelope{Messages: make([]wireTimerMsg, len(ev.Messages))}
	for i, m := range ev.Messages {
		if m.TriggerID == "" {
			return nil, invalidField(timerWhat, msgPointer(i, "/details/trigger_id"), "required")
		}
		env.Messages[i] = wireTimerMsg{
			EventMetadata: newMeta(m.EventID, TimerEventType, m.CreatedAt),
			Details:       wireTimerDetails{TriggerID: m.TriggerID, Payload: m.Payload},
		}
	}
	return marshal(env)
}

// EncodeTimer returns the event a timer trigger sends when it fires at now;
// the local runner uses it to invoke timer-driven functions. The event id is
// derived from triggerID and now, so repeated calls are deterministic.
// triggerID must be non-empty (an empty one is replaced by "local-timer").
func EncodeTimer(triggerID, payload string, now time.Time) []byte {
	if triggerID == "" {
		triggerID = "local-timer"
	}
	b, err := EncodeTimerEvent(TimerEvent{Messages: []TimerMessage{{
		EventID:   triggerID + "-" + strconv.FormatInt(now.UnixNano(), 10),
		CreatedAt: now,
		TriggerID: triggerID,
		Payload:   payload,
	}}})
	if err != nil {
		// Unreachable: the event above is always valid and strings always marshal.
		panic("yc: EncodeTimer: " + err.Error())
	}
	return b
}

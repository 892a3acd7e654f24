package yc

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// QueueEventType is event_metadata.event_type of Message Queue trigger messages.
const QueueEventType = "yandex.cloud.events.messagequeue.QueueMessage"

// QueueEvent is a decoded Message Queue trigger event (platform-notes §2.3):
// a batch of 1..MaxMessages messages. On a function error the trigger returns
// the whole batch to the queue, so handlers must be idempotent per message.
type QueueEvent struct {
	Messages []QueueMessage
}

// QueueMessage is one queue message delivered by the trigger. Empty maps are
// decoded as nil.
type QueueMessage struct {
	// EventID is event_metadata.event_id; usable for dedup (may be empty in hand-made events).
	EventID string
	// QueueID is details.queue_id, the queue ARN ("yrn:yc:ymq:ru-central1:<folder>:<queue>").
	QueueID string
	// CreatedAt is event_metadata.created_at in UTC; zero when absent.
	CreatedAt time.Time
	// MessageID is the queue's message id; never empty after DecodeQueue.
	MessageID string
	// Body is the message body, always a string (parse JSON yourself).
	Body string
	// MD5OfBody is the hex MD5 of Body as reported by the queue (not verified here; see BodyMD5).
	MD5OfBody string
	// Attributes are the system attributes, e.g. SentTimestamp, ApproximateReceiveCount.
	Attributes map[string]string
	// MessageAttributes are the user message attributes with a string value
	// (string_value / stringValue). The data type (String, Number, ...) is not kept.
	MessageAttributes map[string]string
	// BinaryMessageAttributes are the user message attributes with a binary
	// value (binary_value / binaryValue), kept as the base64 text sent, unverified.
	BinaryMessageAttributes map[string]string
}

type wireQueueEnvelope struct {
	Messages []wireQueueMsg `json:"messages"`
}

type wireQueueMsg struct {
	EventMetadata wireMeta         `json:"event_metadata"`
	Details       wireQueueDetails `json:"details"`
}

type wireQueueDetails struct {
	QueueID string         `json:"queue_id,omitempty"`
	Message wireSQSMessage `json:"message"`
}

type wireSQSMessage struct {
	MessageID         string              `json:"message_id"`
	MD5OfBody         string              `json:"md5_of_body,omitempty"`
	Body              string              `json:"body"`
	Attributes        map[string]string   `json:"attributes,omitempty"`
	MessageAttributes map[string]wireAttr `json:"message_attributes,omitempty"`
}

// wireAttr is one message attribute. Yandex docs show both spellings
// (data_type/string_value in the newer include, dataType/stringValue in the
// older trigger page), so both are decoded; the snake_case one wins when an
// attribute carries both. Encoding always uses snake_case.
type wireAttr struct {
	DataType         string  `json:"data_type,omitempty"`
	StringValue      *string `json:"string_value,omitempty"`
	BinaryValue      *string `json:"binary_value,omitempty"`
	DataTypeCamel    string  `json:"dataType,omitempty"`
	StringValueCamel *string `json:"stringValue,omitempty"`
	BinaryValueCamel *string `json:"binaryValue,omitempty"`
}

// Attribute data types written by EncodeQueue, as spelled in the docs' samples.
const (
	attrTypeString = "StringValue"
	attrTypeBinary = "BinaryValue"
)

const queueWhat = "queue event"

// DecodeQueue decodes and validates a Message Queue trigger event. It requires
// 1 to MaxMessages messages, each with event_type QueueEventType and a
// non-empty details.message.message_id; body must be a string and attributes
// string maps. A message attribute with neither a string nor a binary value
// (protobuf JSON omits empty strings) decodes as an empty string value.
// Errors are apperr.Invalid and name the offending field.
func DecodeQueue(raw []byte) (QueueEvent, error) {
	var env wireQueueEnvelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return QueueEvent{}, decodeError(queueWhat, err)
	}
	if err := checkCount(queueWhat, len(env.Messages)); err != nil {
		return QueueEvent{}, err
	}
	ev := QueueEvent{Messages: make([]QueueMessage, len(env.Messages))}
	for i, m := range env.Messages {
		created, err := m.EventMetadata.check(queueWhat, i, QueueEventType)
		if err != nil {
			return QueueEvent{}, err
		}
		w := m.Details.Message
		if w.MessageID == "" {
			return QueueEvent{}, invalidField(queueWhat, msgPointer(i, "/details/message/message_id"), "required")
		}
		qm := QueueMessage{
			EventID:    m.EventMetadata.EventID,
			QueueID:    m.Details.QueueID,
			CreatedAt:  created,
			MessageID:  w.MessageID,
			Body:       w.Body,
			MD5OfBody:  w.MD5OfBody,
			Attributes: nilIfEmpty(w.Attributes),
		}
		for name, a := range w.MessageAttributes {
			str, bin := a.StringValue, a.BinaryValue
			if str == nil && bin == nil {
				str, bin = a.StringValueCamel, a.BinaryValueCamel
			}
			if bin != nil {
				qm.BinaryMessageAttributes = put(qm.BinaryMessageAttributes, name, *bin)
			}
			if str != nil || bin == nil {
				qm.MessageAttributes = put(qm.MessageAttributes, name, deref(str))
			}
		}
		ev.Messages[i] = qm
	}
	return ev, nil
}

// EncodeQueue returns the event a Message Queue trigger sends for msgs, in the
// snake_case spelling; the local runner uses it to invoke queue-driven
// functions as the real trigger does. queueID is used for messages whose
// QueueID is empty. Fields are written as given (use BodyMD5 to fill
// MD5OfBody); cloud_id, folder_id and md5_of_message_attributes are omitted.
// It validates like DecodeQueue and also rejects a Body that is not valid
// UTF-8 (apperr.Invalid), so its output always decodes back to msgs.
func EncodeQueue(queueID string, msgs []QueueMessage) ([]byte, error) {
	if err := checkCount(queueWhat, len(msgs)); err != nil {
		return nil, err
	}
	env := wireQueueEnvelope{Messages: make([]wireQueueMsg, len(msgs))}
	for i, m := range msgs {
		if m.MessageID == "" {
			return nil, invalidField(queueWhat, msgPointer(i, "/details/message/message_id"), "required")
		}
		if !utf8.ValidString(m.Body) {
			return nil, invalidField(queueWhat, msgPointer(i, "/details/message/body"), "not valid UTF-8")
		}
		qid := m.QueueID
		if qid == "" {
			qid = queueID
		}
		w := wireSQSMessage{
			MessageID:  m.MessageID,
			MD5OfBody:  m.MD5OfBody,
			Body:       m.Body,
			Attributes: m.Attributes,
		}
		for name, v := range m.MessageAttributes {
			a := w.MessageAttributes[name]
			a.DataType, a.StringValue = attrTypeString, &v
			w.MessageAttributes = putAttr(w.MessageAttributes, name, a)
		}
		for name, v := range m.BinaryMessageAttributes {
			a := w.MessageAttributes[name]
			if a.StringValue == nil {
				a.DataType = attrTypeBinary
			}
			a.BinaryValue = &v
			w.MessageAttributes = putAttr(w.MessageAttributes, name, a)
		}
		env.Messages[i] = wireQueueMsg{
			EventMetadata: newMeta(m.EventID, QueueEventType, m.CreatedAt),
			Details:       wireQueueDetails{QueueID: qid, Message: w},
		}
	}
	return marshal(env)
}

// BodyMD5 returns the hex MD5 digest of body, as the queue reports it in
// md5_of_body.
func BodyMD5(body string) string {
	sum := md5.Sum([]byte(body))
	return hex.EncodeToString(sum[:])
}

func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = make(map[string]string)
	}
	m[k] = v
	return m
}

func putAttr(m map[string]wireAttr, k string, v wireAttr) map[string]wireAttr {
	if m == nil {
		m = make(map[string]wireAttr)
	}
	m[k] = v
	return m
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

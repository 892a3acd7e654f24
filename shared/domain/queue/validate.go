package queue

import (
	"fmt"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/text"
)

// maxEntryID is the longest batch entry id.
const maxEntryID = 80

// maxAttributeName is the longest message attribute name.
const maxAttributeName = 256

// attributeType is the SQS data type of every attribute this port sends; its
// length counts toward the message size, as in SQS.
const attributeType = "String"

// CheckBatch validates msgs for SendBatch. A batch that is invalid as a whole
// (no entries, more than MaxBatch, a bad or duplicate entry id, or valid
// entries together larger than MaxMessageBytes) yields an Invalid err.
// Otherwise err is nil and entryErrs[i] is an Invalid error for each entry
// whose own content is invalid (it must not be sent), nil for the others.
func CheckBatch(msgs []OutMessage) (entryErrs []error, err error) {
	switch {
	case len(msgs) == 0:
		return nil, apperr.New(apperr.Invalid, "queue: empty batch")
	case len(msgs) > MaxBatch:
		return nil, apperr.New(apperr.Invalid, "queue: batch has %d entries, at most %d allowed", len(msgs), MaxBatch)
	}
	seen := make(map[string]int, len(msgs))
	var fields []apperr.FieldError
	for i, m := range msgs {
		ptr := fmt.Sprintf("/%d/id", i)
		if !validEntryID(m.ID) {
			fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: "must match [A-Za-z0-9_-]{1,80}"})
			continue
		}
		if j, dup := seen[m.ID]; dup {
			fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: fmt.Sprintf("duplicates the id of entry %d", j)})
			continue
		}
		seen[m.ID] = i
	}
	if len(fields) > 0 {
		return nil, apperr.Invalidf(fields, "queue: bad batch entry ids")
	}
	entryErrs = make([]error, len(msgs))
	total := 0
	for i, m := range msgs {
		if entryErrs[i] = CheckMessage(m); entryErrs[i] == nil {
			total += MessageSize(m)
		}
	}
	if total > MaxMessageBytes {
		return nil, apperr.New(apperr.Invalid, "queue: batch payload is %d bytes, at most %d allowed", total, MaxMessageBytes)
	}
	return entryErrs, nil
}

// CheckMessage validates one message's content (not its entry id): body,
// attributes, size and delay. It returns nil or an Invalid error.
func CheckMessage(m OutMessage) error {
	var fields []apperr.FieldError
	bad := func(ptr, detail string) { fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: detail}) }
	if m.Body == "" {
		bad("/body", "must not be empty")
	} else if !validText(m.Body) {
		bad("/body", "contains characters SQS does not accept")
	}
	if len(m.Attributes) > MaxAttributes {
		bad("/attributes", fmt.Sprintf("has %d attributes, at most %d allowed", len(m.Attributes), MaxAttributes))
	}
	for name, value := range m.Attributes {
		if !validAttributeName(name) {
			bad("/attributes/"+name, "bad attribute name")
		}
		if value == "" || !validText(value) {
			bad("/attributes/"+name, "value must be non-empty text SQS accepts")
		}
	}
	if n := MessageSize(m); n > MaxMessageBytes {
		bad("/body", fmt.Sprintf("message is %d bytes, at most %d allowed", n, MaxMessageBytes))
	}
	if m.Delay < 0 || m.Delay > MaxDelay {
		bad("/delay", fmt.Sprintf("must be within 0..%s", MaxDelay))
	}
	if len(fields) > 0 {
		return apperr.Invalidf(fields, "queue: invalid message %q", m.ID)
	}
	return nil
}

// MessageSize is the size SQS charges a message against MaxMessageBytes: the
// body plus each attribute's name, data type and value, in bytes.
func MessageSize(m OutMessage) int {
	n := len(m.Body)
	for name, value := range m.Attributes {
		n += len(name) + len(attributeType) + len(value)
	}
	return n
}

// CheckReceive validates opts and returns them normalised (Max 0 → 1).
// Errors are Invalid.
func CheckReceive(opts ReceiveOptions) (ReceiveOptions, error) {
	if opts.Max == 0 {
		opts.Max = 1
	}
	switch {
	case opts.Max < 1 || opts.Max > MaxBatch:
		return opts, apperr.New(apperr.Invalid, "queue: receive max %d outside 1..%d", opts.Max, MaxBatch)
	case opts.Wait < 0 || opts.Wait > MaxWait:
		return opts, apperr.New(apperr.Invalid, "queue: receive wait %s outside 0..%s", opts.Wait, MaxWait)
	case opts.VisibilityTimeout < 0 || opts.VisibilityTimeout > MaxVisibilityTimeout:
		return opts, apperr.New(apperr.Invalid, "queue: visibility timeout %s outside 0..%s", opts.VisibilityTimeout, MaxVisibilityTimeout)
	}
	return opts, nil
}

// CheckSpec validates a QueueSpec for Ensure. Errors are Invalid.
func CheckSpec(spec QueueSpec) error {
	switch {
	case !validEntryID(spec.Name):
		return apperr.New(apperr.Invalid, "queue: queue name %q must match [A-Za-z0-9_-]{1,80}", spec.Name)
	case spec.VisibilityTimeout < 0 || spec.VisibilityTimeout > MaxVisibilityTimeout:
		return apperr.New(apperr.Invalid, "queue: visibility timeout %s outside 0..%s", spec.VisibilityTimeout, MaxVisibilityTimeout)
	case spec.MaxReceiveCount < 0 || spec.MaxReceiveCount > MaxReceiveCountLimit:
		return apperr.New(apperr.Invalid, "queue: max receive count %d outside 0..%d", spec.MaxReceiveCount, MaxReceiveCountLimit)
	case spec.MaxReceiveCount > 0 && spec.DeadLetterQueueURL == "":
		return apperr.New(apperr.Invalid, "queue: max receive count set without a dead-letter queue URL")
	case spec.MaxReceiveCount == 0 && spec.DeadLetterQueueURL != "":
		return apperr.New(apperr.Invalid, "queue: dead-letter queue URL set without a max receive count")
	}
	return nil
}

// CheckVisibility validates a ChangeVisibility call. Errors are Invalid.
func CheckVisibility(receiptHandle string, d time.Duration) error {
	if err := CheckReceiptHandle(receiptHandle); err != nil {
		return err
	}
	if d < 0 || d > MaxVisibilityTimeout {
		return apperr.New(apperr.Invalid, "queue: visibility timeout %s outside 0..%s", d, MaxVisibilityTimeout)
	}
	return nil
}

// CheckReceiptHandle rejects an empty receipt handle with Invalid.
func CheckReceiptHandle(receiptHandle string) error {
	if strings.TrimSpace(receiptHandle) == "" {
		return apperr.New(apperr.Invalid, "queue: empty receipt handle")
	}
	return nil
}

// validEntryID reports whether s matches [A-Za-z0-9_-]{1,80} (the rule for
// batch entry ids and, in this port, queue names).
func validEntryID(s string) bool {
	if s == "" || len(s) > maxEntryID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// validAttributeName applies the SQS message attribute name rules.
func validAttributeName(s string) bool {
	if s == "" || len(s) > maxAttributeName || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	lower := strings.ToLower(s)
	if strings.HasPrefix(lower, "aws.") || strings.HasPrefix(lower, "amazon.") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// validText reports whether s is valid UTF-8 made only of the characters SQS
// accepts in bodies and attribute values: the one text rule (package
// textrule), the same predicate the API boundary validates against.
func validText(s string) bool { return text.Valid(s) }

package redrive

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/jsonstrict"
)

// member is one "key": value of a JSON object, in document order.
type member struct {
	key string
	raw []byte
}

// parseObject splits data, which must be exactly one JSON object, into its
// members, with the strict rules every JSON boundary shares (package
// jsonstrict: valid UTF-8, no duplicate member, nothing after the object).
// ptr is the object's JSON pointer, for error messages.
func parseObject(data []byte, ptr string) ([]member, *apperr.FieldError) {
	ms, fe := jsonstrict.Members(data, ptr)
	if fe != nil {
		return nil, fe
	}
	out := make([]member, len(ms))
	for i, m := range ms {
		out[i] = member{key: m.Key, raw: m.Raw}
	}
	return out, nil
}

// escapePointer escapes a key for use in a JSON pointer (RFC 6901).
func escapePointer(key string) string { return jsonstrict.EscapePointer(key) }

// fieldErrs collects the field errors of one decode.
type fieldErrs []apperr.FieldError

func (f *fieldErrs) add(ptr, format string, args ...any) {
	*f = append(*f, apperr.FieldError{Pointer: ptr, Detail: fmt.Sprintf(format, args...)})
}

func isNull(raw []byte) bool { return string(raw) == "null" }

// str decodes a JSON string.
func (f *fieldErrs) str(ptr string, raw []byte) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		f.add(ptr, "must be a string")
		return "", false
	}
	return s, true
}

// boolean decodes true or false.
func (f *fieldErrs) boolean(ptr string, raw []byte) (bool, bool) {
	switch string(raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	f.add(ptr, "must be true or false")
	return false, false
}

func isNumber(raw []byte) bool {
	return len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9')
}

// integer decodes a JSON integer (no fraction, no exponent) within [lo, hi].
func (f *fieldErrs) integer(ptr string, raw []byte, lo, hi int) (int, bool) {
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if !isNumber(raw) || err != nil || n < int64(lo) || n > int64(hi) {
		f.add(ptr, "must be an integer between %d and %d", lo, hi)
		return 0, false
	}
	return int(n), true
}

// number decodes a finite JSON number within [lo, hi].
func (f *fieldErrs) number(ptr string, raw []byte, lo, hi float64) (float64, bool) {
	v, err := strconv.ParseFloat(string(raw), 64)
	if !isNumber(raw) || err != nil || math.IsNaN(v) || v < lo || v > hi {
		f.add(ptr, "must be a number between %g and %g", lo, hi)
		return 0, false
	}
	return v, true
}

// strings decodes a JSON array of strings.
func (f *fieldErrs) strings(ptr string, raw []byte) ([]string, bool) {
	var items []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		f.add(ptr, "must be an array of strings")
		return nil, false
	}
	out := make([]string, 0, len(items))
	ok, bad := true, 0
	for i, it := range items {
		s, good := (&fieldErrs{}).str("", it)
		if !good {
			ok = false
			bad++
			if bad <= maxIDErrors {
				f.add(fmt.Sprintf("%s/%d", ptr, i), "must be a string")
			}
			continue
		}
		out = append(out, s)
	}
	if bad > maxIDErrors {
		f.add(ptr, "%d more elements are not strings", bad-maxIDErrors)
	}
	return out, ok
}

package redrive

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"unicode/utf8"

	"ordersaga/shared/apperr"
)

// member is one "key": value of a JSON object, in document order.
type member struct {
	key string
	raw []byte
}

// parseObject splits data, which must be exactly one JSON object, into its
// members. Duplicate keys are an error (encoding/json would silently keep
// the last one). ptr is the object's JSON pointer, for error messages.
func parseObject(data []byte, ptr string) ([]member, *apperr.FieldError) {
	bad := func(detail string) *apperr.FieldError {
		return &apperr.FieldError{Pointer: ptr, Detail: detail} // "" is the whole document (RFC 6901)
	}
	if ptr == "" && !utf8.Valid(data) {
		// encoding/json would read invalid UTF-8 as U+FFFD silently.
		return nil, bad("is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, bad("is not valid JSON: " + jsonErrText(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, bad("must be a JSON object")
	}
	var out []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad("is not valid JSON: " + jsonErrText(err))
		}
		key, _ := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad("is not valid JSON: " + jsonErrText(err))
		}
		if seen[key] {
			return nil, &apperr.FieldError{Pointer: ptr + "/" + escapePointer(key), Detail: "appears more than once"}
		}
		seen[key] = true
		out = append(out, member{key: key, raw: bytes.TrimSpace(raw)})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, bad("is not valid JSON: " + jsonErrText(err))
	}
	if ptr == "" {
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, bad("must be exactly one JSON object, with nothing after it")
		}
	}
	return out, nil
}

// jsonErrText is the text of an encoding/json syntax error (it names only
// the offending character and offset, nothing internal).
func jsonErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// escapePointer escapes a key for use in a JSON pointer (RFC 6901).
func escapePointer(key string) string {
	var b bytes.Buffer
	for _, r := range key {
		switch r {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

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

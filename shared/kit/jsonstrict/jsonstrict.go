// Package jsonstrict reads JSON the strict way at every boundary (order API,
// admin API, redrive console): the document must be valid UTF-8 with no
// escape of a lone surrogate, exactly one value, and no object may name a
// member twice. encoding/json would keep the last of two duplicate members
// and turn invalid UTF-8 and lone surrogates ("\ud800") into U+FFFD, and
// another parser (a gateway, a log pipeline, a consumer) could read the same
// bytes differently (RFC 8259 §4 leaves duplicates undefined; RFC 7493 I-JSON
// forbids them).
package jsonstrict

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
)

// Member is one "key": value of a JSON object, in document order.
type Member struct {
	Key string
	Raw []byte // the value, trimmed of surrounding white space
}

// Members splits data, which must be exactly one JSON object, into its
// members. Duplicate keys, invalid UTF-8 and anything after the object are
// errors. ptr is the object's JSON pointer ("" for a whole document); a
// nested object (ptr != "") may be followed by nothing but white space too.
// Values are returned raw: call Members again for a nested object.
func Members(data []byte, ptr string) ([]Member, *apperr.FieldError) {
	bad := func(detail string) *apperr.FieldError {
		return &apperr.FieldError{Pointer: ptr, Detail: detail} // "" is the whole document (RFC 6901)
	}
	if _, detail := Rewritten(data); detail != "" {
		return nil, bad(detail)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, bad("is not valid JSON: " + ErrText(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, bad("must be a JSON object")
	}
	var out []Member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, bad("is not valid JSON: " + ErrText(err))
		}
		key, _ := tok.(string) // inside an object the decoder only yields string keys
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, bad("is not valid JSON: " + ErrText(err))
		}
		if seen[key] {
			return nil, &apperr.FieldError{Pointer: ptr + "/" + EscapePointer(key), Detail: "appears more than once"}
		}
		seen[key] = true
		out = append(out, Member{Key: key, Raw: bytes.TrimSpace(raw)})
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, bad("is not valid JSON: " + ErrText(err))
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("must be exactly one JSON object, with nothing after it")
	}
	return out, nil
}

// frame is one open object or array while Check walks a document.
type frame struct {
	object    bool
	ptr       string
	seen      map[string]bool // object: member names so far
	expectKey bool            // object: the next token is a key
	lastKey   string          // object: the key whose value comes next
	index     int             // array: index of the next element
}

// Check reports the first strictness violation in data: invalid UTF-8, an
// escape of a lone surrogate (see Rewritten), a syntax error, an empty document, trailing data, or a member named twice in
// any object at any depth (the pointer names the member). nil means data is
// one strict JSON value. It checks no types or schemas.
func Check(data []byte) *apperr.FieldError {
	if _, detail := Rewritten(data); detail != "" {
		return &apperr.FieldError{Pointer: "", Detail: detail}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*frame
	started := false
	for {
		tok, err := dec.Token()
		switch {
		case errors.Is(err, io.EOF) && !started:
			return &apperr.FieldError{Pointer: "", Detail: "is empty; expected a JSON value"}
		case errors.Is(err, io.EOF) && len(stack) > 0:
			// The decoder reports a document cut inside an object or
			// array as a plain end of input.
			return &apperr.FieldError{Pointer: "", Detail: "is not valid JSON: unexpected end of input"}
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return &apperr.FieldError{Pointer: "", Detail: "is not valid JSON: " + ErrText(err)}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.expectKey {
			key, _ := tok.(string) // the decoder yields only string keys here
			if top.seen[key] {
				return &apperr.FieldError{Pointer: top.ptr + "/" + EscapePointer(key), Detail: "appears more than once"}
			}
			top.seen[key], top.lastKey, top.expectKey = true, key, false
			continue
		}
		// tok starts a value: name it.
		ptr := ""
		switch {
		case top == nil && started:
			return &apperr.FieldError{Pointer: "", Detail: "must be exactly one JSON value, with nothing after it"}
		case top == nil:
		case top.object:
			ptr, top.expectKey = top.ptr+"/"+EscapePointer(top.lastKey), true
		default:
			ptr = fmt.Sprintf("%s/%d", top.ptr, top.index)
			top.index++
		}
		started = true
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, ptr: ptr, seen: map[string]bool{}, expectKey: true})
		case json.Delim('['):
			stack = append(stack, &frame{ptr: ptr})
		}
	}
}

// Rewritten reports the first text in data, a JSON text, that a decoder
// would rewrite instead of read: a byte that is not valid UTF-8, or a \u
// escape of a surrogate that is not the first half of a pair followed by
// the second (encoding/json reads both as U+FFFD, so two different inputs
// would become one string). It returns the byte offset and a detail that
// says what is there without echoing the text, or -1 and "" when there is
// none. A backslash occurs only inside strings in JSON, so the scan needs
// no parse; syntax errors are left to the decoder.
func Rewritten(data []byte) (offset int, detail string) {
	if !utf8.Valid(data) {
		i := 0
		for i < len(data) {
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return i, fmt.Sprintf("is not valid UTF-8 (at byte %d)", i)
	}
	for i := 0; i+1 < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		r, ok := hex4(data, i+2)
		if data[i+1] != 'u' || !ok {
			i++ // a two-byte escape (\\, \", ...): its second byte is no backslash
			continue
		}
		switch {
		case r >= 0xD800 && r < 0xDC00:
			if i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if r2, ok := hex4(data, i+8); ok && r2 >= 0xDC00 && r2 < 0xE000 {
					i += 11 // a surrogate pair: one character
					continue
				}
			}
			return i, fmt.Sprintf("holds the escape %s of a lone surrogate (at byte %d), which is no character", data[i:i+6], i)
		case r >= 0xDC00 && r < 0xE000:
			return i, fmt.Sprintf("holds the escape %s of a lone surrogate (at byte %d), which is no character", data[i:i+6], i)
		}
		i += 5
	}
	return -1, ""
}

// hex4 reads the four hex digits at data[i:i+4].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// ErrText is the text of an encoding/json syntax error (it names only the
// offending character and offset, nothing internal).
func ErrText(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "unexpected end of input"
	}
	return err.Error()
}

// EscapePointer escapes a key for use in a JSON pointer (RFC 6901).
func EscapePointer(key string) string {
	if !strings.ContainsAny(key, "~/") {
		return key
	}
	return pointerEscaper.Replace(key)
}

// pointerEscaper is built once: a Replacer is costly to build, and
// EscapePointer runs for every member of every request body (CheckFields).
var pointerEscaper = strings.NewReplacer("~", "~0", "/", "~1")

// CheckFields reports the first member of data, at any depth, whose name is
// not exactly (byte for byte) the JSON name of a field of the Go type t that
// the document decodes into. encoding/json matches member names without
// regard to case, with Unicode folding ("CUSTOMER_ID" and "ſku" fill
// customer_id and sku), so {"quantity":1,"Quantity":900} passes Check and
// decodes as 900, while a case-sensitive reader (a gateway, a log pipeline,
// a consumer) sees 1. Objects decoded into structs are checked member by
// member; arrays and slices element by element; maps and other kinds are
// not checked. data must already have passed Check.
func CheckFields(data []byte, t reflect.Type) *apperr.FieldError {
	return checkFields(bytes.TrimSpace(data), t, "")
}

func checkFields(raw []byte, t reflect.Type, ptr string) *apperr.FieldError {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if raw[0] != '{' {
			return nil // a type error, reported by the decoder
		}
		members, fe := Members(raw, ptr)
		if fe != nil {
			return fe
		}
		fields := jsonFields(t)
		for _, m := range members {
			ft, ok := fields[m.Key]
			p := ptr + "/" + EscapePointer(m.Key)
			if !ok {
				return &apperr.FieldError{Pointer: p, Detail: "is not a field of this object (member names are case-sensitive)"}
			}
			if fe := checkFields(m.Raw, ft, p); fe != nil {
				return fe
			}
		}
	case reflect.Slice, reflect.Array:
		if raw[0] != '[' {
			return nil
		}
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil {
			return nil // a type error, reported by the decoder
		}
		for i, e := range elems {
			if fe := checkFields(bytes.TrimSpace(e), t.Elem(), fmt.Sprintf("%s/%d", ptr, i)); fe != nil {
				return fe
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's exported fields to their types, as
// encoding/json names them (the tag's name, else the Go name; "-" skipped).
// Embedded structs are not flattened: the types checked here have none.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

package yc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"ordersaga/shared/domain/apperr"
)

// invalidField returns an apperr.Invalid error for one field of an envelope.
// pointer is a JSON pointer ("/messages/0/details/message/message_id").
func invalidField(what, pointer, detail string) error {
	return apperr.Invalidf(
		[]apperr.FieldError{{Pointer: pointer, Detail: detail}},
		"%s: %s: %s", what, pointerToPath(pointer), detail)
}

// pointerToPath renders a JSON pointer as a dotted path for messages:
// "/messages/0/details" becomes "messages[0].details".
func pointerToPath(pointer string) string {
	if pointer == "" || pointer == "/" {
		return "(root)"
	}
	var b strings.Builder
	for _, seg := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

// msgPointer returns the JSON pointer of messages[i] followed by rest.
func msgPointer(i int, rest string) string {
	return "/messages/" + strconv.Itoa(i) + rest
}

// decodeError classifies an encoding/json failure as apperr.Invalid, naming
// the field when encoding/json reports one.
func decodeError(what string, err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		pointer := "/"
		if te.Field != "" {
			pointer = "/" + strings.ReplaceAll(te.Field, ".", "/")
		}
		detail := fmt.Sprintf("want JSON %s, got %s", jsonKind(te.Type), te.Value)
		return &apperr.Error{
			Kind:   apperr.Invalid,
			Msg:    fmt.Sprintf("%s: %s: %s", what, pointerToPath(pointer), detail),
			Fields: []apperr.FieldError{{Pointer: pointer, Detail: detail}},
			Err:    err,
		}
	case errors.As(err, &se):
		return apperr.Wrap(apperr.Invalid, err, "%s: not valid JSON (offset %d)", what, se.Offset)
	default:
		return apperr.Wrap(apperr.Invalid, err, "%s: malformed JSON", what)
	}
}

// jsonKind names the JSON kind a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	default:
		return t.String()
	}
}

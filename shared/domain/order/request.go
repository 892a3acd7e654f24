package order

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strings"
	"unicode/utf8"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/kit/jsonstrict"
	"ordersaga/shared/kit/text"
)

// Limits of an order request. They bound the work one request can cause and
// keep totals far from int64 overflow.
const (
	MaxBodyBytes      = 64 << 10 // 64 KiB; larger bodies get 413
	MaxItems          = 100
	MaxQuantity       = 1_000_000
	MaxUnitPriceMinor = 1_000_000_000_000 // 10^12 minor units
	MaxTotalMinor     = 1_000_000_000_000_000
	MaxCustomerIDLen  = 128
	MaxSKULen         = 64
)

var skuPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidSKU reports whether sku is 1-MaxSKULen ASCII letters, digits, '.',
// '_' or '-', starting with a letter or digit (a subset of the text rule).
func ValidSKU(sku string) bool { return len(sku) <= MaxSKULen && skuPattern.MatchString(sku) }

// Request is the body of POST /orders.
type Request struct {
	CustomerID string `json:"customer_id"`
	Currency   string `json:"currency"`
	Items      []Item `json:"items"`
}

// Total is the order total in minor units. Call it on a validated request.
func (r Request) Total() int64 {
	var t int64
	for _, it := range r.Items {
		t += it.Quantity * it.UnitPriceMinor
	}
	return t
}

// DecodeRequest reads and validates an order request. It rejects bodies over
// MaxBodyBytes (TooLarge), malformed JSON, unknown fields, trailing data and
// every rule in Validate (Invalid, with the offending fields listed).
func DecodeRequest(r io.Reader) (Request, error) {
	body, err := io.ReadAll(io.LimitReader(r, MaxBodyBytes+1))
	if err != nil {
		return Request{}, apperr.Wrap(apperr.Invalid, err, "cannot read request body")
	}
	if len(body) > MaxBodyBytes {
		return Request{}, apperr.New(apperr.TooLarge, "request body exceeds %d bytes", MaxBodyBytes)
	}
	return DecodeRequestBytes(body)
}

// DecodeRequestBytes is DecodeRequest over a body already in memory.
func DecodeRequestBytes(body []byte) (Request, error) {
	if len(body) > MaxBodyBytes {
		return Request{}, apperr.New(apperr.TooLarge, "request body exceeds %d bytes", MaxBodyBytes)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return Request{}, apperr.New(apperr.Invalid, "request body is empty; expected a JSON object")
	}
	// Strict JSON first (package jsonstrict): encoding/json would keep the
	// last of two duplicate members and read invalid UTF-8 as U+FFFD, while
	// another parser could read the same bytes differently.
	if fe := jsonstrict.Check(body); fe != nil {
		if fe.Pointer == "" {
			return Request{}, apperr.New(apperr.Invalid, "%s", fe.Describe("request body"))
		}
		return Request{}, apperr.Invalidf([]apperr.FieldError{*fe}, "%s", fe.Describe("request body"))
	}
	// Exact member names: encoding/json would also fill customer_id from
	// "CUSTOMER_ID" (or sku from "ſku"), a second spelling another parser
	// reads as a different member.
	if fe := jsonstrict.CheckFields(body, reflect.TypeOf(Request{})); fe != nil {
		return Request{}, apperr.Invalidf([]apperr.FieldError{*fe}, "%s", fe.Describe("request body"))
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return Request{}, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Request{}, apperr.New(apperr.Invalid, "request body must hold exactly one JSON object")
	}
	if err := req.Validate(); err != nil {
		return Request{}, err
	}
	return req, nil
}

func decodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		ptr := "/" + strings.ReplaceAll(typeErr.Field, ".", "/")
		return apperr.Invalidf([]apperr.FieldError{{Pointer: ptr, Detail: fmt.Sprintf("must be a JSON %s", jsonKind(typeErr.Type.Kind().String()))}},
			"field %s has the wrong type", ptr)
	case errors.As(err, &syntaxErr):
		return apperr.New(apperr.Invalid, "malformed JSON at byte %d", syntaxErr.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return apperr.New(apperr.Invalid, "malformed JSON: unexpected end of body")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json exposes unknown fields only through this message.
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apperr.Invalidf([]apperr.FieldError{{Pointer: "/" + name, Detail: "unknown field"}}, "unknown field %q", name)
	default:
		return apperr.New(apperr.Invalid, "malformed JSON request body")
	}
}

func jsonKind(goKind string) string {
	switch goKind {
	case "int64", "int", "int32":
		return "integer"
	case "slice":
		return "array"
	case "struct":
		return "object"
	default:
		return goKind
	}
}

// Validate checks every business rule of a request and reports all violations at once.
func (r Request) Validate() error {
	var fe []apperr.FieldError
	add := func(ptr, format string, args ...any) {
		fe = append(fe, apperr.FieldError{Pointer: ptr, Detail: fmt.Sprintf(format, args...)})
	}
	switch {
	case strings.TrimSpace(r.CustomerID) == "":
		add("/customer_id", "is required")
	case utf8.RuneCountInString(r.CustomerID) > MaxCustomerIDLen:
		add("/customer_id", "must be at most %d characters", MaxCustomerIDLen)
	case !text.Valid(r.CustomerID):
		add("/customer_id", "%s", text.Problem(r.CustomerID))
	case !text.Printable(r.CustomerID):
		add("/customer_id", "must not contain control characters")
	}
	if !ValidCurrency(r.Currency) {
		add("/currency", "must be an ISO 4217 currency code such as RUB")
	}
	switch {
	case len(r.Items) == 0:
		add("/items", "must hold at least one item")
	case len(r.Items) > MaxItems:
		add("/items", "must hold at most %d items (got %d)", MaxItems, len(r.Items))
	default:
		seen := make(map[string]int, len(r.Items))
		var total int64
		for i, it := range r.Items {
			p := fmt.Sprintf("/items/%d", i)
			switch {
			case it.SKU == "":
				add(p+"/sku", "is required")
			case !ValidSKU(it.SKU):
				add(p+"/sku", "must be 1-%d characters of letters, digits, '.', '_' or '-'", MaxSKULen)
			default:
				if j, dup := seen[it.SKU]; dup {
					add(p+"/sku", "duplicates /items/%d; put the total quantity on one line", j)
				}
				seen[it.SKU] = i
			}
			if it.Quantity <= 0 || it.Quantity > MaxQuantity {
				add(p+"/quantity", "must be between 1 and %d", MaxQuantity)
			}
			if it.UnitPriceMinor <= 0 || it.UnitPriceMinor > MaxUnitPriceMinor {
				add(p+"/unit_price_minor", "must be between 1 and %d minor units", int64(MaxUnitPriceMinor))
			}
			if it.Quantity > 0 && it.Quantity <= MaxQuantity && it.UnitPriceMinor > 0 && it.UnitPriceMinor <= MaxUnitPriceMinor {
				total += it.Quantity * it.UnitPriceMinor // both bounded: no overflow per line
				if total > MaxTotalMinor {
					total = MaxTotalMinor + 1
				}
			}
		}
		if total > MaxTotalMinor {
			add("/items", "order total must not exceed %d minor units", int64(MaxTotalMinor))
		}
	}
	if len(fe) > 0 {
		return apperr.Invalidf(fe, "the order request is invalid")
	}
	return nil
}

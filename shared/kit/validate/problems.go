// Package validate collects the refusals of a constructor's Validate, one
// per field, into one apperr.Invalid error that names them all.
package validate

import (
	"fmt"
	"strings"

	"ordersaga/shared/domain/apperr"
)

// Problems collects what a constructor's Validate refuses, one entry per
// field, so the error names every bad field at once. The construction rule
// it serves: a Config's zero field takes its documented default, and a
// negative or otherwise impossible value is refused, never replaced.
type Problems []apperr.FieldError

// Add records that field is wrong; detail says how ("must not be negative (got -1)").
func (p *Problems) Add(field, format string, args ...any) {
	*p = append(*p, apperr.FieldError{Pointer: "/" + field, Detail: fmt.Sprintf(format, args...)})
}

// Require records field as missing when ok is false.
func (p *Problems) Require(ok bool, field string) {
	if !ok {
		p.Add(field, "is required")
	}
}

// Number is what NotNegative checks.
type Number interface {
	~int | ~int64 | ~float64
}

// NotNegative records field when v is negative (zero is the default, so it
// is never a problem here).
func NotNegative[T Number](p *Problems, field string, v T) {
	if v < 0 {
		p.Add(field, "must not be negative (got %v)", v)
	}
}

// AtMost records field when v exceeds most.
func AtMost[T Number](p *Problems, field string, v, most T) {
	if v > most {
		p.Add(field, "must be at most %v (got %v)", most, v)
	}
}

// Err returns nil when there is no problem, otherwise an apperr.Invalid
// error whose message names every field ("relay.New: invalid
// configuration: BatchSize must not be negative (got -1)") and whose
// Fields list them.
func (p Problems) Err(op string) error {
	if len(p) == 0 {
		return nil
	}
	parts := make([]string, len(p))
	for i, f := range p {
		parts[i] = strings.TrimPrefix(f.Pointer, "/") + " " + f.Detail
	}
	return apperr.Invalidf(p, "%s: invalid configuration: %s", op, strings.Join(parts, "; "))
}

package redrive

import (
	"fmt"
	"math"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/kit/text"
)

// Length limits of free-text and id fields.
const (
	maxIDLen     = 128
	maxActor     = 128
	maxReason    = 1000
	maxFilterStr = 128
	// maxIDErrors bounds the per-element errors reported for ids.
	maxIDErrors = 20
)

// ValidID reports whether id is well formed for a dead-letter (or order,
// saga) id: [A-Za-z0-9][A-Za-z0-9_.:-]{0,127}.
func ValidID(id string) bool { return validID(id) }

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		alnum := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || (c != '_' && c != '.' && c != ':' && c != '-')) {
			return false
		}
	}
	return true
}

// checkIDs validates a list of ids: not empty (if required), at most MaxIDs,
// each well formed and unique. ptr is the list's JSON pointer.
func checkIDs(ids []string, ptr string, required bool) []apperr.FieldError {
	var fields []apperr.FieldError
	switch {
	case len(ids) == 0 && required:
		return []apperr.FieldError{{Pointer: ptr, Detail: "must name at least one dead-letter id"}}
	case len(ids) > MaxIDs:
		return []apperr.FieldError{{Pointer: ptr, Detail: fmt.Sprintf("names %d ids, at most %d allowed", len(ids), MaxIDs)}}
	}
	seen := make(map[string]int, len(ids))
	bad := 0
	for i, id := range ids {
		p := ptr
		if ptr == "/ids" {
			p = fmt.Sprintf("/ids/%d", i)
		}
		detail := ""
		if !validID(id) {
			detail = "is not a dead-letter id (1-128 characters: letters, digits, _ . : -)"
		} else if j, dup := seen[id]; dup {
			detail = fmt.Sprintf("duplicates /ids/%d", j)
		} else {
			seen[id] = i
			continue
		}
		bad++
		if bad <= maxIDErrors {
			fields = append(fields, apperr.FieldError{Pointer: p, Detail: detail})
		}
	}
	if bad > maxIDErrors {
		fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: fmt.Sprintf("%d more bad ids not listed", bad-maxIDErrors)})
	}
	return fields
}

// checkActor validates who acts: required, printable, at most 128 characters.
func checkActor(actor string) *apperr.FieldError {
	if actor == "" {
		return &apperr.FieldError{Pointer: "/actor", Detail: "name who is acting (required for actions that change something)"}
	}
	return checkText(actor, "/actor", maxActor)
}

// checkText validates a free-text field: the one text rule (package
// textrule: what every store and queue adapter accepts), no control
// characters, at most n bytes.
func checkText(s, ptr string, n int) *apperr.FieldError {
	if len(s) > n {
		return &apperr.FieldError{Pointer: ptr, Detail: fmt.Sprintf("is longer than %d bytes", n)}
	}
	if p := text.Problem(s); p != "" {
		return &apperr.FieldError{Pointer: ptr, Detail: p}
	}
	if !text.Printable(s) {
		return &apperr.FieldError{Pointer: ptr, Detail: "must be printable text"}
	}
	return nil
}

// summarize renders field errors for an error message.
func summarize(fields []apperr.FieldError) string {
	const show = 3
	parts := make([]string, 0, show+1)
	for i, f := range fields {
		if i == show {
			parts = append(parts, fmt.Sprintf("and %d more", len(fields)-show))
			break
		}
		ptr := f.Pointer
		if ptr == "" {
			ptr = "the command"
		}
		parts = append(parts, ptr+" "+f.Detail)
	}
	return strings.Join(parts, "; ")
}

// filterEmpty reports whether f selects nothing narrower than its source.
func filterEmpty(f dlq.Filter) bool {
	f.Source = ""
	return f == dlq.Filter{}
}

// normalize applies defaults to sel and checks it against the service's limits.
func (s *Service) normalize(sel Selection) (Selection, []apperr.FieldError) {
	return normalizeSelection(sel, s.lim)
}

// normalizeSelection applies defaults to sel and checks it against lim.
// Pointers are those of the console command.
func normalizeSelection(sel Selection, lim limits) (Selection, []apperr.FieldError) {
	var fields []apperr.FieldError
	bad := func(ptr, format string, args ...any) {
		fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: fmt.Sprintf(format, args...)})
	}
	byIDs, byFilter := len(sel.IDs) > 0, !filterEmpty(sel.Filter)
	switch {
	case byIDs && (byFilter || sel.All):
		bad("/ids", "give ids, or a filter, or \"all\": true — not several")
	case byFilter && sel.All:
		bad("/all", "\"all\" cannot be combined with a filter")
	case !byIDs && !byFilter && !sel.All:
		bad("/ids", "give ids, or a filter, or \"all\": true (a redrive never selects everything by default; a source alone counts as everything of that source)")
	}
	if byIDs {
		fields = append(fields, checkIDs(sel.IDs, "/ids", true)...)
		if sel.Filter.Source != "" {
			bad("/source", "is not used with ids (ids name the entries exactly)")
		}
	}
	if sel.Reason != "" {
		if e := checkText(sel.Reason, "/reason", maxReason); e != nil {
			fields = append(fields, *e)
		}
	}
	if sel.Force && !byIDs {
		bad("/force", "applies only to entries named by id")
	}
	if sel.Filter.Status != "" && sel.Filter.Status != dlq.StatusOpen {
		bad("/filter/status", "only open entries are redriven")
	}
	if sel.Filter.Flagged != nil && *sel.Filter.Flagged {
		bad("/filter/flagged", "flagged entries are redriven only by id with \"force\": true")
	}
	if !sel.Filter.From.IsZero() && !sel.Filter.To.IsZero() && !sel.Filter.From.Before(sel.Filter.To) {
		bad("/filter/to", "must be after from")
	}
	limit := lim.maxPerCall
	if sel.Max == 0 {
		sel.Max = min(DefaultMax, limit)
		if byIDs {
			sel.Max = len(sel.IDs)
		}
	}
	switch {
	case sel.Max < 1 || sel.Max > limit:
		bad("/max", "must be between 1 and %d", limit)
	case byIDs && len(sel.IDs) > sel.Max:
		bad("/max", "is %d but %d ids are named", sel.Max, len(sel.IDs))
	}
	rate := lim.maxRate
	if sel.RatePerSec == 0 {
		sel.RatePerSec = math.Min(DefaultRate, rate)
	}
	if !(sel.RatePerSec >= MinRate && sel.RatePerSec <= rate) { // also rejects NaN
		bad("/rate_per_sec", "must be between %g and %g", MinRate, rate)
	}
	return sel, fields
}

package redrive

import (
	"slices"
	"strings"
	"time"

	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/kit/text"
)

// maxCursor is the longest accepted page cursor.
const maxCursor = 512

// maxPurgeAge bounds older_than (about 100 years).
const maxPurgeAge = 100 * 365 * 24 * time.Hour

var sourceNames = []string{"queue", "outbox", "saga", "all"}

var statusNames = []string{string(dlq.StatusOpen), string(dlq.StatusRedriven), string(dlq.StatusResolved), string(dlq.StatusDiscarded)}

// checkCommand validates a decoded command: the action, which fields it
// takes and requires, and every value. present names the fields given.
func checkCommand(c Command, present map[string]bool, lim limits) fieldErrs {
	var errs fieldErrs
	actionOK := slices.Contains(actionNames, c.Action)
	switch {
	case !present["action"]:
		errs.add("/action", "is required: one of %s", strings.Join(actionNames, ", "))
	case c.Action != "" && !actionOK:
		errs.add("/action", "unknown action %q: use one of %s", text.Clip(c.Action, 40), strings.Join(actionNames, ", "))
	}
	if actionOK {
		for _, k := range fieldNames {
			if present[k] && k != "action" && k != "actor" && !slices.Contains(allowed[c.Action], k) {
				errs.add("/"+k, "is not used by the %s action (it takes: %s)", c.Action, takes(c.Action))
			}
		}
		if mutating[c.Action] && !present["actor"] {
			errs.add("/actor", "is required for %s: name who is acting", c.Action)
		}
	}
	checkValues(c, present, &errs)
	switch c.Action {
	case ActionShow:
		switch {
		case !present["ids"]:
			errs.add("/ids", "show needs exactly one id")
		case len(c.IDs) > 1:
			errs.add("/ids", "show takes exactly one id")
		}
	case ActionDiscard:
		if !present["ids"] {
			errs.add("/ids", "discard needs the ids of the entries to discard")
		}
		if c.Reason == "" {
			errs.add("/reason", "discard needs a reason")
		}
	case ActionPurge:
		if !present["older_than"] {
			errs.add("/older_than", "purge needs older_than (at least 24h), e.g. \"720h\"")
		}
	case ActionRedrive:
		_, fields := normalizeSelection(c.Selection(), lim)
		errs = append(errs, fields...)
	}
	return errs
}

func takes(action string) string {
	if len(allowed[action]) == 0 {
		return "only actor"
	}
	return strings.Join(append([]string{"actor"}, allowed[action]...), ", ")
}

// checkValues validates each field given, whatever the action.
func checkValues(c Command, present map[string]bool, errs *fieldErrs) {
	if c.Source != "" && !slices.Contains(sourceNames, c.Source) {
		errs.add("/source", "must be one of %s", strings.Join(sourceNames, ", "))
	}
	if present["ids"] && c.IDs != nil {
		*errs = append(*errs, checkIDs(c.IDs, "/ids", true)...)
	}
	if present["actor"] {
		if e := checkActor(c.Actor); e != nil {
			*errs = append(*errs, *e)
		}
	}
	if c.Reason != "" {
		if e := checkText(c.Reason, "/reason", maxReason); e != nil {
			*errs = append(*errs, *e)
		}
	}
	if present["older_than"] {
		d, err := time.ParseDuration(c.OlderThan)
		switch {
		case err != nil:
			errs.add("/older_than", "must be a duration such as \"720h\"")
		case d < MinPurgeAge || d > maxPurgeAge:
			errs.add("/older_than", "must be at least 24h (and at most 100 years)")
		}
	}
	if len(c.Cursor) > maxCursor || strings.Trim(c.Cursor, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		errs.add("/cursor", "is not a page cursor (pass next_cursor from the previous page as is)")
	} else if present["cursor"] && c.Cursor == "" {
		errs.add("/cursor", "must not be empty (leave it out for the first page)")
	}
	if c.Filter != nil {
		checkFilter(*c.Filter, errs)
	}
}

func checkFilter(f CommandFilter, errs *fieldErrs) {
	if f.Status != "" && !slices.Contains(statusNames, f.Status) {
		errs.add("/filter/status", "must be one of %s", strings.Join(statusNames, ", "))
	}
	if f.ErrorType != "" && !validErrorType(f.ErrorType) {
		errs.add("/filter/error_type", "must be a snake_case error type such as transient or max_receives_exceeded")
	}
	if f.OrderID != "" && !validID(f.OrderID) {
		errs.add("/filter/order_id", "is not an order id")
	}
	if f.SagaID != "" && !validID(f.SagaID) {
		errs.add("/filter/saga_id", "is not a saga id")
	}
	from, errFrom := parseTime(f.From)
	if errFrom != nil {
		errs.add("/filter/from", "%s", errFrom.Error())
	}
	to, errTo := parseTime(f.To)
	if errTo != nil {
		errs.add("/filter/to", "%s", errTo.Error())
	}
	if errFrom == nil && errTo == nil && !from.IsZero() && !to.IsZero() && !from.Before(to) {
		errs.add("/filter/to", "must be after from")
	}
}

func validErrorType(s string) bool {
	if len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

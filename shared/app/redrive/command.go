package redrive

import (
	"fmt"
	"strings"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

// MaxCommandBytes is the largest console command accepted.
const MaxCommandBytes = 256 * 1024

// Actions of the console command.
const (
	ActionList    = "list"
	ActionShow    = "show"
	ActionStats   = "stats"
	ActionRedrive = "redrive"
	ActionDiscard = "discard"
	ActionPurge   = "purge"
	ActionIngest  = "ingest"
)

// Command is the console function's (dlqredrive) JSON input. Fields not
// used by the action are refused, so a typo cannot widen what it does. See
// DecodeCommand for the rules.
type Command struct {
	Action     string         `json:"action"`
	Source     string         `json:"source,omitempty"`
	IDs        []string       `json:"ids,omitempty"`
	Filter     *CommandFilter `json:"filter,omitempty"`
	All        bool           `json:"all,omitempty"`
	Max        int            `json:"max,omitempty"`
	RatePerSec float64        `json:"rate_per_sec,omitempty"`
	DryRun     bool           `json:"dry_run,omitempty"`
	Force      bool           `json:"force,omitempty"`
	Actor      string         `json:"actor,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	OlderThan  string         `json:"older_than,omitempty"`
	Cursor     string         `json:"cursor,omitempty"`
	Limit      int            `json:"limit,omitempty"`
}

// CommandFilter is the filter of a command (times are RFC 3339).
type CommandFilter struct {
	Status    string `json:"status,omitempty"`
	ErrorType string `json:"error_type,omitempty"`
	OrderID   string `json:"order_id,omitempty"`
	SagaID    string `json:"saga_id,omitempty"`
	From      string `json:"from,omitempty"`
	To        string `json:"to,omitempty"`
	Flagged   *bool  `json:"flagged,omitempty"`
}

// allowed lists, per action, the fields it takes besides action and actor.
var allowed = map[string][]string{
	ActionList:    {"source", "filter", "cursor", "limit"},
	ActionShow:    {"ids"},
	ActionStats:   {},
	ActionRedrive: {"source", "ids", "filter", "all", "max", "rate_per_sec", "dry_run", "force", "reason"},
	ActionDiscard: {"ids", "reason"},
	ActionPurge:   {"older_than", "max", "dry_run"},
	ActionIngest:  {"max"},
}

// mutating actions need an actor.
var mutating = map[string]bool{ActionRedrive: true, ActionDiscard: true, ActionPurge: true, ActionIngest: true}

var actionNames = []string{ActionList, ActionShow, ActionStats, ActionRedrive, ActionDiscard, ActionPurge, ActionIngest}

// limits are the configured bounds a command is checked against.
type limits struct {
	maxPerCall int
	maxRate    float64
}

// DecodeCommand parses and validates a console command against the default
// limits (DefaultMaxPerCall, DefaultMaxRate); Service.DecodeCommand uses
// the service's. The input must be one JSON object of at most
// MaxCommandBytes with known fields of the right JSON types (no nulls, no
// duplicate keys, integers without fraction or exponent). Every violation
// is reported as an apperr.FieldError with a JSON pointer in one Invalid
// error (TooLarge for oversize input). Pure: safe for concurrent use.
func DecodeCommand(raw []byte) (Command, error) {
	return decodeCommand(raw, limits{maxPerCall: DefaultMaxPerCall, maxRate: DefaultMaxRate})
}

// DecodeCommand is the package DecodeCommand with this service's limits.
func (s *Service) DecodeCommand(raw []byte) (Command, error) {
	return decodeCommand(raw, s.lim)
}

func decodeCommand(raw []byte, lim limits) (Command, error) {
	if len(raw) > MaxCommandBytes {
		return Command{}, apperr.New(apperr.TooLarge, "the command is %d bytes, at most %d allowed", len(raw), MaxCommandBytes)
	}
	members, perr := parseObject(raw, "")
	if perr != nil {
		fields := []apperr.FieldError{*perr}
		return Command{}, apperr.Invalidf(fields, "invalid command: %s", summarize(fields))
	}
	var c Command
	var errs fieldErrs
	present := map[string]bool{}
	for _, m := range members {
		present[m.key] = true
		decodeField(&c, m, &errs, lim)
	}
	errs = append(errs, checkCommand(c, present, lim)...)
	if len(errs) > 0 {
		errs = dedupe(errs)
		return Command{}, apperr.Invalidf(errs, "invalid command: %s", summarize(errs))
	}
	return c, nil
}

// decodeField decodes one top-level member into c.
func decodeField(c *Command, m member, errs *fieldErrs, lim limits) {
	ptr := "/" + escapePointer(m.key)
	if isNull(m.raw) {
		if _, known := fieldKinds[m.key]; known {
			errs.add(ptr, "must not be null (leave the field out instead)")
		} else {
			errs.add(ptr, "unknown field")
		}
		return
	}
	switch m.key {
	case "action":
		c.Action, _ = errs.str(ptr, m.raw)
	case "source":
		c.Source, _ = errs.str(ptr, m.raw)
	case "actor":
		c.Actor, _ = errs.str(ptr, m.raw)
	case "reason":
		c.Reason, _ = errs.str(ptr, m.raw)
	case "older_than":
		c.OlderThan, _ = errs.str(ptr, m.raw)
	case "cursor":
		c.Cursor, _ = errs.str(ptr, m.raw)
	case "ids":
		if ids, ok := errs.strings(ptr, m.raw); ok {
			c.IDs = ids // non-nil even when empty: present, checked as given
		}
	case "filter":
		c.Filter = decodeFilter(m.raw, errs)
	case "all":
		c.All, _ = errs.boolean(ptr, m.raw)
	case "dry_run":
		c.DryRun, _ = errs.boolean(ptr, m.raw)
	case "force":
		c.Force, _ = errs.boolean(ptr, m.raw)
	case "max":
		c.Max, _ = errs.integer(ptr, m.raw, 1, lim.maxPerCall)
	case "limit":
		c.Limit, _ = errs.integer(ptr, m.raw, 1, MaxPageLimit)
	case "rate_per_sec":
		c.RatePerSec, _ = errs.number(ptr, m.raw, MinRate, lim.maxRate)
	default:
		errs.add(ptr, "unknown field (known: %s)", strings.Join(fieldNames, ", "))
	}
}

// fieldKinds names every top-level field.
var fieldKinds = map[string]bool{"action": true, "source": true, "ids": true, "filter": true, "all": true,
	"max": true, "rate_per_sec": true, "dry_run": true, "force": true, "actor": true, "reason": true,
	"older_than": true, "cursor": true, "limit": true}

var fieldNames = []string{"action", "source", "ids", "filter", "all", "max", "rate_per_sec", "dry_run",
	"force", "actor", "reason", "older_than", "cursor", "limit"}

func decodeFilter(raw []byte, errs *fieldErrs) *CommandFilter {
	members, perr := parseObject(raw, "/filter")
	if perr != nil {
		*errs = append(*errs, *perr)
		return nil
	}
	f := &CommandFilter{}
	for _, m := range members {
		ptr := "/filter/" + escapePointer(m.key)
		if isNull(m.raw) {
			errs.add(ptr, "must not be null (leave the field out instead)")
			continue
		}
		switch m.key {
		case "status":
			f.Status, _ = errs.str(ptr, m.raw)
		case "error_type":
			f.ErrorType, _ = errs.str(ptr, m.raw)
		case "order_id":
			f.OrderID, _ = errs.str(ptr, m.raw)
		case "saga_id":
			f.SagaID, _ = errs.str(ptr, m.raw)
		case "from":
			f.From, _ = errs.str(ptr, m.raw)
		case "to":
			f.To, _ = errs.str(ptr, m.raw)
		case "flagged":
			if v, ok := errs.boolean(ptr, m.raw); ok {
				f.Flagged = &v
			}
		default:
			errs.add(ptr, "unknown filter field (known: status, error_type, order_id, saga_id, from, to, flagged)")
		}
	}
	return f
}

func dedupe(errs fieldErrs) fieldErrs {
	seen := map[apperr.FieldError]bool{}
	out := errs[:0]
	for _, e := range errs {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// ToFilter converts the command's source and filter to a store filter.
// The command must have been validated (times parse).
func (c Command) ToFilter() dlq.Filter {
	var f dlq.Filter
	if c.Source != "" && c.Source != "all" {
		f.Source = dlq.Source(c.Source)
	}
	if c.Filter == nil {
		return f
	}
	f.Status, f.ErrorType = dlq.Status(c.Filter.Status), c.Filter.ErrorType
	f.OrderID, f.SagaID = c.Filter.OrderID, c.Filter.SagaID
	f.From, _ = parseTime(c.Filter.From)
	f.To, _ = parseTime(c.Filter.To)
	if c.Filter.Flagged != nil {
		v := *c.Filter.Flagged
		f.Flagged = &v
	}
	return f
}

// Selection returns the redrive selection of a redrive command.
func (c Command) Selection() Selection {
	return Selection{IDs: c.IDs, Filter: c.ToFilter(), All: c.All, Max: c.Max, RatePerSec: c.RatePerSec,
		DryRun: c.DryRun, Force: c.Force, Reason: c.Reason}
}

func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("must be an RFC 3339 time such as 2026-03-01T12:00:00Z")
	}
	return t.UTC(), nil
}

package redrive

import (
	"context"
	"encoding/json"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

// IngestReport is the outcome of the ingest action.
type IngestReport struct {
	Action   string `json:"action"`
	Ingested int    `json:"ingested"`
	AuditID  string `json:"audit_id,omitempty"`
}

// Execute runs a console command and returns its JSON-able report: a
// ListResult, Detail, Stats, Report, ChangeReport or IngestReport. The
// command is validated again first (against this service's limits), so
// Execute is safe to call with a Command built by hand. Errors: Invalid and
// NotFound (nothing changed), TooLarge, Transient, Internal.
func (s *Service) Execute(ctx context.Context, cmd Command) (any, error) {
	raw, err := json.Marshal(cmd)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "the command cannot be encoded")
	}
	c, err := s.DecodeCommand(raw)
	if err != nil {
		return nil, err
	}
	switch c.Action {
	case ActionList:
		return s.List(ctx, c.ToFilter(), dlq.Page{Limit: c.Limit, Cursor: c.Cursor})
	case ActionShow:
		return s.Show(ctx, c.IDs[0])
	case ActionStats:
		return s.Stats(ctx)
	case ActionRedrive:
		return s.Redrive(ctx, c.Actor, c.Selection())
	case ActionDiscard:
		return s.Discard(ctx, c.Actor, c.IDs, c.Reason)
	case ActionPurge:
		age, _ := time.ParseDuration(c.OlderThan) // validated
		return s.Purge(ctx, c.Actor, age, c.Max, c.DryRun)
	case ActionIngest:
		return s.ingestAudited(ctx, c.Actor, c.Max)
	}
	return nil, apperr.New(apperr.Invalid, "unknown action %q", c.Action)
}

// ingestAudited runs Ingest for an operator and audits it.
func (s *Service) ingestAudited(ctx context.Context, actor string, max int) (IngestReport, error) {
	n, err := s.Ingest(ctx, max)
	rep := IngestReport{Action: ActionIngest, Ingested: n}
	outcome := "ok"
	if err != nil {
		outcome = "failed"
	}
	detail := map[string]any{"ingested": n, "ids": []string{}}
	if err != nil {
		detail["error"] = apperr.Message(err)
	}
	rep.AuditID, _ = s.audit(ctx, actor, ActionIngest, map[string]any{"max": max}, n, outcome, detail)
	if err != nil {
		return IngestReport{}, err
	}
	return rep, nil
}

// ErrorResult is the JSON report of a failed command.
type ErrorResult struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody describes what went wrong.
type ErrorBody struct {
	// Kind is the apperr kind: invalid, not_found, too_large, transient, internal...
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Fields name each offending field by JSON pointer.
	Fields []apperr.FieldError `json:"fields,omitempty"`
	// NothingChanged is true when the command was refused before doing
	// anything (validation, unknown ids).
	NothingChanged bool `json:"nothing_changed"`
	// Retryable says whether the same command may succeed later.
	Retryable bool `json:"retryable"`
}

// ErrorReport turns an error of DecodeCommand or Execute into the console's
// JSON error report. Internal errors never show their text.
func ErrorReport(err error) ErrorResult {
	k := apperr.KindOf(err)
	refused := k == apperr.Invalid || k == apperr.NotFound || k == apperr.TooLarge ||
		k == apperr.Unauthenticated || k == apperr.Forbidden
	return ErrorResult{Error: ErrorBody{Kind: k.String(), Message: apperr.Message(err), Fields: apperr.Fields(err),
		NothingChanged: refused, Retryable: apperr.Retryable(err)}}
}

// IngestBeforeRead moves what waits in the dead-letter queues into the store
// before an operator reads it, so a list shows every failure. Moving
// messages is a change, so it is audited (by actor, or "system") whenever it
// moved anything. Errors: those of Ingest.
func (s *Service) IngestBeforeRead(ctx context.Context, actor string, max int) (int, error) {
	if actor == "" {
		actor = ActorSystem
	}
	n, err := s.Ingest(ctx, max)
	if n > 0 {
		_, _ = s.audit(ctx, actor, ActionIngest, map[string]any{"max": max, "before": "read"}, n, "ok",
			map[string]any{"ingested": n, "ids": []string{}})
	}
	return n, err
}

// Package selfcheck is the self-check every function answers: an event
// {"action":"selfcheck"} (from the console's test tab, `yc serverless
// function invoke`, or the local runner's /_invoke/<function>) returns one
// JSON Report instead of running the function's body. The report names the
// function's configuration (secrets redacted), opens a store session and
// reads one row, reads the attributes of each configured queue, measures the
// clock skew against the database, and compares the schema the database
// carries with the one the code expects; each line has a verdict and, when
// it fails, what to do.
//
// A self-check never writes: it reads one key that no order has, and asks
// the queues for their approximate depth. It runs the same code on every
// target; only the Database probe differs (YDB in the cloud, SQLite locally).
package selfcheck

import (
	"bytes"
	"encoding/json"
	"time"
)

// Action is the value of "action" that asks a function for its self-check.
const Action = "selfcheck"

// Verdict is the outcome of one check, and of the whole report.
type Verdict string

// Verdicts, from best to worst. The report's verdict is its worst line's.
const (
	Pass Verdict = "PASS"
	// Warn: the function works, but something deserves a look (a skewed
	// clock within the tolerance, a queue with a backlog).
	Warn Verdict = "WARN"
	// Fail: the function cannot do its work until the fix is applied.
	Fail Verdict = "FAIL"
)

func (v Verdict) rank() int {
	switch v {
	case Pass:
		return 0
	case Warn:
		return 1
	default:
		return 2
	}
}

// Line is one check's outcome.
type Line struct {
	// Check names what was checked, e.g. "store.read" or "queue.saga-commands".
	Check   string  `json:"check"`
	Verdict Verdict `json:"verdict"`
	// Detail says what was found (never a secret).
	Detail string `json:"detail"`
	// Fix says what to do when the verdict is not PASS.
	Fix string `json:"fix,omitempty"`
	// Millis is how long the check took.
	Millis int64 `json:"ms"`
}

// Report is a function's answer to a self-check event.
type Report struct {
	Action   string  `json:"action"` // always "selfcheck"
	Function string  `json:"function"`
	Verdict  Verdict `json:"verdict"`
	// Lines are the checks in the order they ran.
	Lines []Line `json:"checks"`
	// Config is the function's configuration, secrets redacted (Redact).
	Config map[string]string `json:"config,omitempty"`
	// Code says which build answers (Go version, module, function version).
	Code Code `json:"code"`
	// At is when the check started, by the function's clock.
	At time.Time `json:"at"`
}

// add appends l and lowers the report's verdict to l's if it is worse.
func (r *Report) add(l Line) {
	r.Lines = append(r.Lines, l)
	if r.Verdict == "" || l.Verdict.rank() > r.Verdict.rank() {
		r.Verdict = l.Verdict
	}
}

// Requested reports whether event asks for the self-check: a JSON object
// whose "action" is "selfcheck". Anything else (a gateway event, a trigger
// batch, another dlqredrive command, malformed JSON) is left to the
// function's own body.
func Requested(event []byte) bool {
	event = bytes.TrimSpace(event)
	if len(event) == 0 || event[0] != '{' || !bytes.Contains(event, []byte(Action)) {
		return false
	}
	var probe struct {
		Action string `json:"action"`
	}
	return json.Unmarshal(event, &probe) == nil && probe.Action == Action
}

package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Verdicts of a preflight line. SKIP is a check that could not run here
// (its reason says what would run it); it does not fail the preflight.
const (
	pass = "PASS"
	fail = "FAIL"
	skip = "SKIP"
)

// line is one printed check.
type line struct {
	Verdict string
	Check   string
	Detail  string
	Fix     string
	Took    time.Duration
}

// report prints each line as it is added and counts failures.
type report struct {
	out   io.Writer
	lines []line
	start time.Time
}

func newReport(out io.Writer) *report { return &report{out: out, start: time.Now()} }

func (r *report) add(l line) {
	r.lines = append(r.lines, l)
	took := ""
	if l.Took > 0 {
		took = fmt.Sprintf(" (%s)", l.Took.Round(time.Millisecond))
	}
	fmt.Fprintf(r.out, "%-4s  %-28s %s%s\n", l.Verdict, l.Check, l.Detail, took)
	if l.Fix != "" && l.Verdict != pass {
		fmt.Fprintf(r.out, "      %-28s fix: %s\n", "", l.Fix)
	}
}

// check runs f, timing it, and adds its line.
func (r *report) check(name string, f func() line) line {
	start := time.Now()
	l := f()
	l.Check, l.Took = name, time.Since(start)
	r.add(l)
	return l
}

func (r *report) failed() []string {
	var out []string
	for _, l := range r.lines {
		if l.Verdict == fail {
			out = append(out, l.Check)
		}
	}
	return out
}

// finish prints the summary line and returns an error naming the failed
// checks, or nil.
func (r *report) finish() error {
	bad := r.failed()
	took := time.Since(r.start).Round(100 * time.Millisecond)
	if len(bad) > 0 {
		fmt.Fprintf(r.out, "preflight: FAIL: %d of %d checks failed (%s) in %s\n", len(bad), len(r.lines), strings.Join(bad, ", "), took)
		return fmt.Errorf("%d checks failed: %s", len(bad), strings.Join(bad, ", "))
	}
	fmt.Fprintf(r.out, "preflight: PASS: %d checks in %s\n", len(r.lines), took)
	return nil
}

func ok(format string, args ...any) line {
	return line{Verdict: pass, Detail: fmt.Sprintf(format, args...)}
}

func bad(fix, format string, args ...any) line {
	return line{Verdict: fail, Detail: fmt.Sprintf(format, args...), Fix: fix}
}

package console

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func logLine(seq int, outcome saga.Outcome, at time.Duration) saga.LogEntry {
	return saga.LogEntry{Seq: seq, Step: "charge_payment", Direction: saga.Forward, Outcome: outcome, Attempt: seq,
		StateAfter: saga.StateRunning, At: t0.Add(at)}
}

// rowKinds names the timeline's rows: the seq of a step-log line, "R" for
// the resend.
func rowKinds(rows []timelineRow) string {
	var b strings.Builder
	for _, r := range rows {
		if r.Redrive != nil {
			b.WriteString("R")
			continue
		}
		b.WriteString(string(rune('0' + r.Seq)))
	}
	return b.String()
}

// TestTimelinePlacesTheRedriveInTime: every step-log line in order, and the
// resend after the lines at or before its exact time, or, known only to
// precede the row's last update, before the lines at or after that time.
func TestTimelinePlacesTheRedriveInTime(t *testing.T) {
	history := []saga.LogEntry{logLine(1, saga.OutcomeSucceeded, 0), logLine(2, saga.OutcomeWaiting, time.Minute),
		logLine(3, saga.OutcomeWaiting, 2*time.Minute)}
	cases := []struct {
		name    string
		history []saga.LogEntry
		mark    *orders.ResendMark
		want    string
	}{
		{"no resend", history, nil, "123"},
		{"exact, between lines", history, &orders.ResendMark{At: t0.Add(90 * time.Second), Exact: true}, "12R3"},
		{"exact, at a line's time", history, &orders.ResendMark{At: t0.Add(time.Minute), Exact: true}, "12R3"},
		{"before, at a line's time", history, &orders.ResendMark{At: t0.Add(time.Minute)}, "1R23"},
		{"exact, after every line", history, &orders.ResendMark{At: t0.Add(time.Hour), Exact: true}, "123R"},
		{"no step yet", nil, &orders.ResendMark{At: t0, Exact: true}, "R"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := rowKinds(timeline(&orders.SagaView{History: tc.history, LastResend: tc.mark}))
			if got != tc.want {
				t.Errorf("timeline = %s, want %s", got, tc.want)
			}
		})
	}
}

var timelineRowRE = regexp.MustCompile(`(?s)<tr class="([^"]*)"><td class="num">([^<]*)</td><td>([^<]*)</td>.*?</tr>`)

// TestOrderPageShowsWaitsAndRedriveAsEvents: the order page's timeline
// renders breaker waits as rows of their own, marked, and recovery's
// resend as a row at its time among them, and the counts with the last
// resend's time.
func TestOrderPageShowsWaitsAndRedriveAsEvents(t *testing.T) {
	sv := &orders.SagaView{ID: "s-1", State: saga.StateRunning, Step: "charge_payment", Attempts: 3,
		History:      []saga.LogEntry{logLine(1, saga.OutcomeSucceeded, 0), logLine(2, saga.OutcomeWaiting, time.Minute), logLine(3, saga.OutcomeWaiting, 3*time.Minute)},
		BreakerWaits: 2, RecoveryResends: 1, LastResend: &orders.ResendMark{At: t0.Add(2 * time.Minute), Exact: true}}
	v := orders.View{View: order.NewView(order.Order{ID: "o-1", Status: order.StatusPending}), Saga: sv}
	var buf bytes.Buffer
	err := parsePages()["order"].ExecuteTemplate(&buf, "layout", view{Title: "Order", Data: orderData{Order: v, Timeline: timeline(sv)}})
	if err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	i := strings.Index(page, `<table id="timeline">`)
	if i < 0 {
		t.Fatalf("no timeline:\n%s", page)
	}
	var got []string
	for _, m := range timelineRowRE.FindAllStringSubmatch(page[i:], -1) {
		got = append(got, m[1]+"|"+m[2]+"|"+m[3])
	}
	want := []string{
		"dir-forward out-succeeded|1|2026-03-01 12:00:00Z",
		"dir-forward out-waiting|2|2026-03-01 12:01:00Z",
		"ev-redrive|—|2026-03-01 12:02:00Z",
		"dir-forward out-waiting|3|2026-03-01 12:03:00Z",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timeline rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, s := range []string{"waiting (breaker open)", "recovery resend", `<span id="breaker-waits">2</span>`,
		`<span id="recovery-redrives">1</span> consumed, the last at 2026-03-01 12:02:00Z`} {
		if !strings.Contains(page, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
}

package ydbstore

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
)

func TestCursorRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		at   time.Time
		id   string
	}{
		{"zero time", time.Time{}, "dl-1"},
		{"epoch", time.Unix(0, 0).UTC(), "dl-2"},
		{"micros", time.Date(1988, 3, 4, 5, 6, 7, 891011000, time.UTC), "dl:with:colons"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at, id, err := decodeCursor(encodeCursor(tt.at, tt.id))
			if err != nil || !at.Equal(tt.at) || at.IsZero() != tt.at.IsZero() || id != tt.id {
				t.Errorf("got (%v, %q, %v), want (%v, %q)", at, id, err, tt.at, tt.id)
			}
		})
	}
	for _, bad := range []string{"!!!", "bm9jb2xvbg", "eDox"} { // not base64, "nocolon", "x:1"
		if _, _, err := decodeCursor(bad); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("decodeCursor(%q) = %v, want Invalid", bad, err)
		}
	}
}

func TestDeadLetterListQuery(t *testing.T) {
	flagged := true
	from := time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	dated := encodeCursor(from.Add(time.Hour), "dl-9")
	undated := encodeCursor(time.Time{}, "dl-9")
	every := dlq.Filter{Source: dlq.SourceSaga, ErrorType: "e", OrderID: "o", SagaID: "s",
		From: from, To: from.Add(time.Hour), Flagged: &flagged}
	tests := []struct {
		name      string
		f         dlq.Filter
		cursor    string
		contains  []string
		absent    []string
		emptyPage bool
	}{
		{"no filter: both branches of the time index", dlq.Filter{}, "",
			[]string{"VIEW idx_last_failed", "last_failed_at >= $epoch", "last_failed_at IS NULL", "UNION ALL"},
			[]string{"$status", "$col_source", "$from", "$to", "$after_at", "$after_id"}, false},
		{"status uses the status index", dlq.Filter{Status: dlq.StatusOpen, Source: dlq.SourceOutbox}, "",
			[]string{"VIEW idx_status_last_failed", "status = $status AND", "`source` = $col_source"},
			[]string{"$from", "$after_id", "idx_last_failed\n"}, false},
		{"a From bound leaves out the undated branch", dlq.Filter{From: from}, "",
			[]string{"last_failed_at >= $from"}, []string{"IS NULL", "UNION ALL", "$epoch"}, false},
		{"after a dated entry", dlq.Filter{}, dated,
			[]string{"last_failed_at <= $after_at AND (last_failed_at < $after_at OR id < $after_id)", "last_failed_at IS NULL\n"},
			nil, false},
		{"after an undated entry only undated ones follow", dlq.Filter{To: from}, undated,
			[]string{"last_failed_at IS NULL AND id < $after_id"}, []string{"$dated", "$to", "$epoch"}, false},
		{"every filter and a dated cursor", every, dated,
			[]string{"error_type = $error_type", "order_id = $order_id", "saga_id = $saga_id", "flagged = $flagged", "last_failed_at < $to"},
			[]string{"IS NULL"}, false},
		{"From and an undated cursor: nothing can follow", every, undated, nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yql, ps, err := deadLetterListQuery(tt.f, tt.cursor, 51)
			if err != nil {
				t.Fatal(err)
			}
			if tt.emptyPage {
				if yql != "" {
					t.Errorf("want no query, got:\n%s", yql)
				}
				return
			}
			for _, c := range tt.contains {
				if !strings.Contains(yql, c) {
					t.Errorf("query lacks %q:\n%s", c, yql)
				}
			}
			for _, c := range tt.absent {
				if strings.Contains(yql, c) {
					t.Errorf("query has %q:\n%s", c, yql)
				}
			}
			checkDeclares(t, "list dead letters", yql, ps)
			if got := typed(t, ps, "$limit").GetValue().GetUint64Value(); got != 51 {
				t.Errorf("$limit = %d", got)
			}
		})
	}
	if _, _, err := deadLetterListQuery(dlq.Filter{}, "garbage!", 10); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("bad cursor: %v, want Invalid", err)
	}
	for _, f := range []dlq.Filter{
		{From: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
		{To: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		// Invalid whatever the cursor, even when no query would be sent.
		for _, c := range []string{"", undated} {
			if _, _, err := deadLetterListQuery(f, c, 10); !apperr.Is(err, apperr.Invalid) {
				t.Errorf("%+v before 1970, cursor %q: %v, want Invalid", f, c, err)
			}
		}
	}
}

func TestDeadLetterHistoryTimes(t *testing.T) {
	msk := time.FixedZone("MSK", 3*3600)
	d := dlq.DeadLetter{ID: "x", History: []dlq.Failure{{At: time.Date(1990, 1, 1, 3, 0, 0, 999, msk), Error: "e"}, {}}}
	j := typed(t, deadLetterParams(d), "$history").GetValue().GetTextValue()
	var back []dlq.Failure
	if err := fromJSON(j, "history", &back); err != nil {
		t.Fatal(err)
	}
	want := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC)
	if len(back) != 2 || !back[0].At.Equal(want) || back[0].At.Location() != time.UTC || !back[1].At.IsZero() {
		t.Errorf("history times = %+v, want UTC microseconds and zero kept", back)
	}
	if d.History[0].At.Location() != msk {
		t.Error("deadLetterParams must not modify the caller's history")
	}
}

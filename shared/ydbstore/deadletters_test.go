package ydbstore

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/apperr"
	"ordersaga/shared/dlq"
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
	cursor := encodeCursor(from.Add(time.Hour), "dl-9")
	tests := []struct {
		name     string
		f        dlq.Filter
		cursor   string
		wantYQL  string
		nulls    []string
		notNulls []string
	}{
		{"no filter", dlq.Filter{}, "", yqlListDeadLetters,
			[]string{"$col_source", "$error_type", "$order_id", "$saga_id", "$from", "$to", "$flagged", "$after_at", "$after_id"}, nil},
		{"status uses the index", dlq.Filter{Status: dlq.StatusOpen, Source: dlq.SourceOutbox}, "", yqlListDeadLettersByStatus,
			[]string{"$from", "$after_id"}, []string{"$col_source"}},
		{"every filter and a cursor", dlq.Filter{Source: dlq.SourceSaga, ErrorType: "e", OrderID: "o", SagaID: "s",
			From: from, To: from.Add(time.Hour), Flagged: &flagged}, cursor, yqlListDeadLetters,
			nil, []string{"$col_source", "$error_type", "$order_id", "$saga_id", "$from", "$to", "$flagged", "$after_at", "$after_id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			yql, ps, err := deadLetterListQuery(tt.f, tt.cursor, 51)
			if err != nil {
				t.Fatal(err)
			}
			if yql != tt.wantYQL {
				t.Errorf("picked the wrong query:\n%s", yql)
			}
			checkDeclares(t, "list dead letters", yql, ps)
			for _, n := range tt.nulls {
				if !isNull(typed(t, ps, n)) {
					t.Errorf("%s must be NULL", n)
				}
			}
			for _, n := range tt.notNulls {
				if isNull(typed(t, ps, n)) {
					t.Errorf("%s must be set", n)
				}
			}
			if got := typed(t, ps, "$limit").GetValue().GetUint64Value(); got != 51 {
				t.Errorf("$limit = %d", got)
			}
		})
	}
	if !strings.Contains(yqlListDeadLettersByStatus, "VIEW idx_status_last_failed") {
		t.Error("the status query must read the status index")
	}
	if _, _, err := deadLetterListQuery(dlq.Filter{}, "garbage!", 10); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("bad cursor: %v, want Invalid", err)
	}
	if _, _, err := deadLetterListQuery(dlq.Filter{From: time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}, "", 10); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("From before 1970: %v, want Invalid", err)
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

package sqlitequeue

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

// A zero Config takes the defaults; a negative setting is refused with an
// error naming the field, by Open and by New alike.
func TestConfigZeroIsDefaultNegativeIsRefused(t *testing.T) {
	q := openTemp(t, Config{})
	if q.poll != DefaultPollInterval || q.now == nil || q.newID == nil || q.newID() == q.newID() {
		t.Errorf("zero Config: poll %v, clock set %v, ids set %v; want the defaults", q.poll, q.now != nil, q.newID != nil)
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"negative PollInterval", Config{PollInterval: -time.Millisecond}, "PollInterval must not be negative (got -1ms)"},
		{"negative BusyTimeout", Config{BusyTimeout: -time.Second}, "BusyTimeout must not be negative (got -1s)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := Open(filepath.Join(t.TempDir(), "q.db"), tc.cfg); got != nil || !apperr.Is(err, apperr.Invalid) ||
				!strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open = %v, %v; want Invalid containing %q", got, err, tc.want)
			}
			if got, err := New(q.db, tc.cfg); got != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want Invalid containing %q", got, err, tc.want)
			}
		})
	}
}

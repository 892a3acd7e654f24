package sqlitestore

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The count of sagas by state since a time reads the (state, updated_at)
// index alone: a range search, no table row, no sort.
func TestSagaCountReadsTheStateIndexOnly(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "plan.db"), Config{})
	text := queryPlan(t, s.DB(), sqlCountSagasSince, "running", tm(time.Now()), 500)
	if !strings.Contains(text, "COVERING INDEX sagas_state_updated") || strings.Contains(text, "TEMP B-TREE") {
		t.Errorf("plan %q, want a search of the covering index sagas_state_updated without a sort", text)
	}
}

package sqlitequeue

import (
	"testing"
	"time"

	"ordersaga/shared/domain/queue/queuetest"
)

// TestTextRule: the embedded queue accepts exactly what the API boundary's
// text rule (package textrule) accepts.
func TestTextRule(t *testing.T) {
	queuetest.RunTextRule(t, openTemp(t, Config{PollInterval: 10 * time.Millisecond}))
}

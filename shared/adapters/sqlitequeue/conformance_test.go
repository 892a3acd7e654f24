package sqlitequeue

import (
	"path/filepath"
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/queue/queuetest"
)

func TestConformance(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) queue.Queue {
		return openTemp(t, Config{PollInterval: 10 * time.Millisecond})
	}, queuetest.Features{
		TimeUnit:               200 * time.Millisecond,
		LongPollWakesOnVisible: true,
	})
}

// openTemp opens a Queue on a fresh database file, closed at cleanup.
func openTemp(t *testing.T, cfg Config) *Queue {
	t.Helper()
	q, err := Open(filepath.Join(t.TempDir(), "queue.db"), cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := q.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return q
}

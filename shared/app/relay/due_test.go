package relay

import (
	"context"
	"testing"
	"time"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/fakeclock"
)

// The time contract of the publish paths: a row due later is sent with a
// queue delay that never lets its message be delivered before the row is
// due, although the delay is computed from a later clock reading than the
// one the due time was set from (the clock ticks on every reading, as a real
// one does).

// publishPath publishes one new row due later, the way one path does.
type publishPath struct {
	name    string
	publish func(t *testing.T, f *inTxFixture, r *Relay, e outbox.Event)
}

var publishPaths = []publishPath{
	{"after commit", func(t *testing.T, f *inTxFixture, r *Relay, e outbox.Event) {
		f.insert(t, []outbox.Event{e})
		r.Dispatch(context.Background(), []outbox.Event{e})
	}},
	{"in transaction", func(t *testing.T, f *inTxFixture, r *Relay, e outbox.Event) {
		f.publishInTx(t, r, []outbox.Event{e})
	}},
	{"relay", func(t *testing.T, f *inTxFixture, r *Relay, e outbox.Event) {
		e.LeaseOwner, e.LeaseUntil = "", time.Time{}
		f.insert(t, []outbox.Event{e})
		for sent := 0; sent == 0; f.clock.Advance(100 * time.Millisecond) {
			var err error
			if sent, err = r.RunOnce(context.Background(), &Report{}); err != nil {
				t.Fatal(err)
			}
			if sent > 0 && r.cfg.Now().Before(e.NextAttemptAt) {
				t.Fatalf("the relay claimed row %s before it was due", e.ID)
			}
		}
	}},
}

func TestDelayedRowIsNeverDeliveredBeforeItIsDue(t *testing.T) {
	for _, path := range publishPaths {
		for _, wait := range []time.Duration{500 * time.Millisecond, time.Second, 1500 * time.Millisecond, 10 * time.Second} {
			t.Run(path.name+"/"+wait.String(), func(t *testing.T) {
				f := newInTxFixtureOn(t, fakeclock.NewTicking(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Millisecond))
				r := f.relay(t, f.queue, f.urls)
				due := f.clock.Now().Add(wait) // the writer's reading; the relay reads later
				e := f.row("r1", outbox.DestSagaCommands, due)
				path.publish(t, f, r, e)

				url := f.urls[outbox.DestSagaCommands]
				if f.clock.Peek().Before(due) {
					f.clock.AtLeast(due.Add(-time.Millisecond))
					if got := receiveAll(t, f, url); len(got) > 0 {
						t.Fatalf("row due at +%s delivered 1 ms before it was due", wait)
					}
				}
				f.clock.AtLeast(due.Add(queue.DelayUnit))
				if got := receiveAll(t, f, url); len(got) != 1 {
					t.Fatalf("got %d messages one delay unit after the row was due, want 1", len(got))
				}
			})
		}
	}
}

// A row due further ahead than the queue can delay a message is not sent by
// the fast paths: it stays pending, and the relay sends it once it is due.
func TestRowDueBeyondTheLongestDelayWaitsForTheRelay(t *testing.T) {
	for _, path := range publishPaths[:2] {
		t.Run(path.name, func(t *testing.T) {
			f := newInTxFixtureOn(t, fakeclock.NewTicking(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Millisecond))
			r := f.relay(t, f.queue, f.urls)
			due := f.clock.Now().Add(queue.MaxDelay + time.Minute)
			path.publish(t, f, r, f.row("r1", outbox.DestSagaCommands, due))
			if got := f.messages(t); len(got) != 0 {
				t.Fatalf("row due beyond the longest delay was sent: %+v", got)
			}
			if got := f.get(t, "r1"); got.Status != outbox.StatusPending {
				t.Fatalf("row status %s, want pending", got.Status)
			}
			f.clock.AtLeast(due)
			if n, err := r.RunOnce(context.Background(), &Report{}); err != nil || n != 1 {
				t.Fatalf("relay once due: claimed %d, %v; want 1", n, err)
			}
			if got := receiveAll(t, f, f.urls[outbox.DestSagaCommands]); len(got) != 1 {
				t.Fatalf("got %d messages once due, want 1", len(got))
			}
		})
	}
}

func receiveAll(t *testing.T, f *inTxFixture, url string) []queue.Message {
	t.Helper()
	got, err := f.queue.Receive(context.Background(), url, queue.ReceiveOptions{Max: queue.MaxBatch})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

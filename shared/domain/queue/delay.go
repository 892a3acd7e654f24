package queue

import "time"

// DelayUnit is the granularity of a message's delivery delay: SQS and Message
// Queue take DelaySeconds in whole seconds (0..900).
const DelayUnit = time.Second

// DelayUntil is the delivery delay that keeps a message from being delivered
// before due, when it is sent at now or later: due−now rounded up to a whole
// DelayUnit (never down: a 0.99 s wait must not become 0 s), 0 when due is
// not after now. ok is false when due is further than MaxDelay away: no
// delay can hold the message that long, so it must not be sent yet.
//
// now must be read before the send call (the queue counts the delay from
// its own, later, reading), and from one reading for the whole batch.
func DelayUntil(due, now time.Time) (delay time.Duration, ok bool) {
	d := due.Sub(now)
	if d <= 0 {
		return 0, true
	}
	if r := d % DelayUnit; r != 0 {
		d += DelayUnit - r
	}
	if d > MaxDelay {
		return MaxDelay, false
	}
	return d, true
}

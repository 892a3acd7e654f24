package chaos

import (
	"context"
	"strconv"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/transport/yc"
	"ordersaga/shared/wiring/app"
	"ordersaga/shared/wiring/handlers"
)

// historySize bounds the envelopes kept for stale redelivery.
const historySize = 64

// queueARN is the trigger's source queue id in the envelopes.
const queueARN = "yrn:yc:ymq:ru-central1:chaos:saga-commands"

// pump plays the Message Queue trigger of the advancer for up to maxBatches
// batches: receive them, invoke the function with each (in a shuffled
// order, messages shuffled too), and delete a batch only when its
// invocation succeeded. Injected: crashes part-way through a batch, lost
// acknowledgements, the same batch invoked twice, and an old batch
// delivered again. It returns the number of messages received.
func (w *world) pump(ctx context.Context, a *app.App, maxBatches int) int {
	var batches [][]queue.Message
	n := 0
	for len(batches) < maxBatches && ctx.Err() == nil {
		msgs, err := w.fqueue.Receive(ctx, w.cmdURL, queue.ReceiveOptions{Max: w.batch, VisibilityTimeout: w.visibility})
		if err != nil || len(msgs) == 0 {
			break // a failed receive was counted by the queue decorator; the next tick tries again
		}
		batches = append(batches, msgs)
		n += len(msgs)
	}
	w.shuffle(len(batches), func(i, j int) { batches[i], batches[j] = batches[j], batches[i] })
	for _, b := range batches {
		w.shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		w.deliver(ctx, a, b)
	}
	w.mu.Lock()
	var raw []byte
	if len(w.history) > 0 && w.in.fire(w.faultsN, "stale_redelivery", w.faults.StaleRedeliver) {
		raw = w.history[w.in.intn(len(w.history))]
	}
	w.mu.Unlock()
	if raw != nil {
		w.invoke(ctx, a, raw, nil)
	}
	return n
}

// shuffle permutes n elements with the fault stream (not at all while
// injection is off).
func (w *world) shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, w.in.intn(i+1))
	}
}

// deliver invokes the advancer with one received batch and acknowledges it.
func (w *world) deliver(ctx context.Context, a *app.App, msgs []queue.Message) {
	for _, m := range msgs {
		if m.ReceiveCount > 1 {
			w.retries.add("queue_redelivery", 1)
		}
	}
	for i, m := range msgs {
		id := eventID(m.Attributes, m.MessageID)
		w.mu.Lock()
		poisoned, seen := w.poison[id]
		if !seen {
			poisoned = w.in.fire(w.faultsN, "poison_message", w.faults.PoisonMessage)
			w.poison[id] = poisoned
		}
		w.mu.Unlock()
		if poisoned {
			// The function handles the messages before this one, then dies.
			w.crashes.add("advancer_poison_crash", 1)
			if i > 0 {
				w.invoke(ctx, a, w.envelope(msgs[:i]), msgs[:i])
			}
			w.invFail.add("sagaadvancer", 1)
			return
		}
	}
	if w.in.fire(w.crashes, "advancer_crash_mid_batch", w.faults.InvocationCrash) {
		// The function died after handling a prefix of the batch; the
		// trigger sees a failure and deletes nothing.
		if k := w.in.intn(len(msgs)); k > 0 {
			w.invoke(ctx, a, w.envelope(msgs[:k]), msgs[:k])
		}
		w.invFail.add("sagaadvancer", 1)
		return
	}
	raw := w.envelope(msgs)
	w.mu.Lock()
	if len(w.history) < historySize {
		w.history = append(w.history, raw)
	} else {
		w.history[w.in.intn(historySize)] = raw
	}
	w.mu.Unlock()
	ok := w.invoke(ctx, a, raw, msgs)
	if w.in.fire(w.faultsN, "duplicate_invocation", w.faults.DuplicateInvoke) {
		w.invoke(ctx, a, raw, msgs)
	}
	if !ok || w.in.fire(w.crashes, "advancer_lost_ack", w.faults.LostAck) {
		return // the batch comes back after the visibility timeout
	}
	for _, m := range msgs {
		_ = w.fqueue.Delete(ctx, w.cmdURL, m.ReceiptHandle) // a failure means one more delivery
	}
}

// invoke runs the sagaadvancer function body with an envelope and counts
// the deliveries of msgs (nil: msgs are counted from the envelope).
func (w *world) invoke(ctx context.Context, a *app.App, raw []byte, msgs []queue.Message) bool {
	w.mu.Lock()
	if msgs == nil {
		ev, err := yc.DecodeQueue(raw)
		if err != nil {
			w.mu.Unlock()
			return false
		}
		for _, m := range ev.Messages {
			if w.poison[eventID(m.MessageAttributes, m.MessageID)] {
				w.mu.Unlock()
				w.crashes.add("advancer_poison_crash", 1) // it kills this invocation too
				w.invFail.add("sagaadvancer", 1)
				return false
			}
		}
		for _, m := range ev.Messages {
			w.delivered[eventID(m.MessageAttributes, m.MessageID)]++
		}
	} else {
		for _, m := range msgs {
			w.delivered[eventID(m.Attributes, m.MessageID)]++
		}
	}
	w.mu.Unlock()
	if _, err := handlers.Registry["sagaadvancer"](w.invoked(ctx), a, raw); err != nil {
		w.invFail.add("sagaadvancer", 1)
		return false
	}
	return true
}

// envelope is the Message Queue trigger's event for msgs.
func (w *world) envelope(msgs []queue.Message) []byte {
	env := make([]yc.QueueMessage, len(msgs))
	for i, m := range msgs {
		env[i] = yc.QueueMessage{MessageID: m.MessageID, Body: m.Body, MessageAttributes: m.Attributes, CreatedAt: m.SentAt,
			Attributes: map[string]string{
				"SentTimestamp":           strconv.FormatInt(m.SentAt.UnixMilli(), 10),
				"ApproximateReceiveCount": strconv.Itoa(m.ReceiveCount),
			}}
	}
	raw, err := yc.EncodeQueue(queueARN, env)
	if err != nil { // 1..10 well-formed messages always encode
		panic(err)
	}
	return raw
}

// eventID is the outbox event a message carries (its dedupe key).
func eventID(attrs map[string]string, messageID string) string {
	if id := attrs[outbox.AttrEventID]; id != "" {
		return id
	}
	return messageID
}

// runRelay fires the outbox relay's timer once.
func (w *world) runRelay(ctx context.Context, a *app.App) {
	if _, err := handlers.Registry["outboxrelay"](ctx, a, yc.EncodeTimer("chaos-relay", "relay", w.clock.Now())); err != nil {
		w.invFail.add("outboxrelay", 1)
	}
}

// runRecovery fires the saga recovery's timer once.
func (w *world) runRecovery(ctx context.Context, a *app.App) {
	out, err := handlers.Registry["sagarecovery"](ctx, a, yc.EncodeTimer("chaos-recovery", "recover", w.clock.Now()))
	if err != nil {
		w.invFail.add("sagarecovery", 1)
		return
	}
	if rep, ok := out.(handlers.RecoveryReport); ok {
		w.retries.add("recovery_resend", rep.Resent)
	}
}

package queue

import (
	"context"
)

// SendAll sends msgs of any number through q.SendBatch, in batches of at most
// MaxBatch entries and MaxMessageBytes, and returns one result per message in
// input order. Entry ids must follow the OutMessage rules and be unique
// within each batch (unique overall is simplest).
//
// When a batch fails as a whole, SendAll stops: every entry of that batch and
// of the batches not yet sent gets that error as its Err, and SendAll returns
// it too. A nil error therefore means every entry was attempted and its
// outcome is in its own result. Safe for concurrent use if q is.
func SendAll(ctx context.Context, q Queue, queueURL string, msgs []OutMessage) ([]SendResult, error) {
	results := make([]SendResult, 0, len(msgs))
	for _, batch := range chunk(msgs) {
		res, err := q.SendBatch(ctx, queueURL, batch)
		if err != nil {
			for _, m := range msgs[len(results):] {
				results = append(results, SendResult{ID: m.ID, Err: err})
			}
			return results, err
		}
		results = append(results, res...)
	}
	return results, nil
}

// chunk splits msgs into consecutive batches of at most MaxBatch entries whose
// sizes add up to at most MaxMessageBytes. A message that is too large on its
// own gets a batch of its own (where SendBatch reports it as invalid).
func chunk(msgs []OutMessage) [][]OutMessage {
	var out [][]OutMessage
	start, size := 0, 0
	for i, m := range msgs {
		n := MessageSize(m)
		if i > start && (i-start == MaxBatch || size+n > MaxMessageBytes) {
			out = append(out, msgs[start:i])
			start, size = i, 0
		}
		size += n
	}
	if start < len(msgs) {
		out = append(out, msgs[start:])
	}
	return out
}

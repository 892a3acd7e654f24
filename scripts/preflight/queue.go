package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/smithy-go"

	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
)

// queueAdmin is what the queue probe needs beyond the queue port: deleting
// its temporary queues, and the FIFO calls the port does not make. The
// Message Queue admin implements it over the same SQS client settings; the
// embedded queue has none (its file is removed instead).
type queueAdmin interface {
	DeleteQueue(ctx context.Context, url string) error
	FIFO(ctx context.Context, name string) []line
}

// protocolFix is what to do when Message Queue refuses the wire protocol.
const protocolFix = "Message Queue refused the AWS JSON 1.0 protocol that github.com/aws/aws-sdk-go-v2/service/sqs " +
	"v1.42.21 speaks (every call of the functions would fail the same way). Fallback: pin service/sqs to its last " +
	"Query-protocol release (below v1.27.0) with the aws-sdk-go-v2 core it was released with, in go.mod; shared/adapters/ymq uses " +
	"only the typed API, so it compiles unchanged. Run `go run ./scripts/preflight` again, then `go test ./shared/adapters/ymq/` " +
	"against the emulator (docs/deploy.md, \"If Message Queue refuses the JSON protocol\")"

// protocolRefused reports whether err looks like a server that does not
// speak the JSON protocol: a response the SDK could not decode as JSON, or
// an error code a Query-only server answers a JSON request with.
func protocolRefused(err error) bool {
	var de *smithy.DeserializationError
	if errors.As(err, &de) {
		return true
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "InvalidAction", "MissingAction", "UnknownOperationException", "UnknownOperation",
			"InvalidQueryParameter", "UnsupportedProtocol", "MalformedQueryString", "SerializationException":
			return true
		}
	}
	return false
}

// failQueue is the line of a failed queue call: the protocol failure said
// plainly, anything else with the key and role fix.
func failQueue(call string, err error) line {
	if protocolRefused(err) {
		return bad(protocolFix, "%s: the JSON protocol was refused: %v", call, err)
	}
	return bad("check the endpoint (YMQ_ENDPOINT) and the static key (YMQ_ACCESS_KEY_ID, YMQ_SECRET_ACCESS_KEY): "+
		"its service account needs ymq.admin to create and delete queues (the functions' key needs ymq.reader and ymq.writer); "+
		"a refused CreateQueue may also be the cloud's quota of 10 queues (the preflight needs 3 free for a moment)",
		"%s: %v", call, err)
}

// probeQueue runs every call the project makes, with the parameters it
// uses, on two temporary standard queues (a work queue whose redrive policy
// names a dead-letter queue, as saga-commands does), then deletes them.
func probeQueue(ctx context.Context, r *report, q queue.Queue, admin queueAdmin, prefix string) {
	dlqName, workName := prefix+"-dlq", prefix+"-work"
	var dlqURL, workURL string
	defer func() {
		if admin == nil {
			return
		}
		r.check("queue.delete", func() line {
			var errs []error
			for _, u := range []string{workURL, dlqURL} {
				if u != "" {
					errs = append(errs, admin.DeleteQueue(context.WithoutCancel(ctx), u))
				}
			}
			if err := errors.Join(errs...); err != nil {
				return bad("delete the queues named "+prefix+"-* by hand (yc message-queue list / the console); the preflight key needs ymq.admin", "DeleteQueue: %v", err)
			}
			return ok("DeleteQueue: both temporary queues deleted")
		})
	}()
	l := r.check("queue.create", func() line {
		var err error
		if dlqURL, err = q.Ensure(ctx, queue.QueueSpec{Name: dlqName, VisibilityTimeout: 30 * time.Second}); err != nil {
			return failQueue("CreateQueue "+dlqName, err)
		}
		// saga-commands: redrive after MaxReceiveCount receives. 1 here, so
		// the probe sees the move to the dead-letter queue at once.
		if workURL, err = q.Ensure(ctx, queue.QueueSpec{Name: workName, VisibilityTimeout: 30 * time.Second,
			MaxReceiveCount: 1, DeadLetterQueueURL: dlqURL}); err != nil {
			return failQueue("GetQueueAttributes(QueueArn) + CreateQueue with RedrivePolicy "+workName, err)
		}
		if again, err := q.Ensure(ctx, queue.QueueSpec{Name: workName, VisibilityTimeout: 30 * time.Second,
			MaxReceiveCount: 1, DeadLetterQueueURL: dlqURL}); err != nil || again != workURL {
			return failQueue("CreateQueue again (idempotent; GetQueueUrl + SetQueueAttributes when the attributes differ)", errors.Join(err, sameURL(again, workURL)))
		}
		return ok("CreateQueue ×3 (VisibilityTimeout, RedrivePolicy with the DLQ's QueueArn), idempotent")
	})
	if l.Verdict != pass {
		return
	}
	ev := outbox.Event{ID: "preflight-1", AggregateType: "order", AggregateID: "preflight-order", EventType: outbox.TypeOrderCreated,
		Metadata: map[string]string{outbox.AttrCorrelationID: "preflight", outbox.AttrIdempotencyKey: "preflight-key",
			outbox.AttrOrderID: "preflight-order", outbox.AttrSagaID: "preflight-saga"}}
	body := `{"preflight":true,"text":"` + strings.Repeat("ж", 64) + `"}`
	l = r.check("queue.send-batch", func() line {
		res, err := q.SendBatch(ctx, workURL, []queue.OutMessage{
			{ID: ev.ID, Body: body, Attributes: ev.Attributes()},
			{ID: "preflight-2", Body: body, Attributes: ev.Attributes(), Delay: time.Second},
		})
		if err != nil {
			return failQueue("SendMessageBatch", err)
		}
		for _, s := range res {
			if s.Err != nil {
				return failQueue("SendMessageBatch entry "+s.ID, s.Err)
			}
		}
		return ok("SendMessageBatch: 2 entries, %d message attributes each, one with DelaySeconds=1", len(ev.Attributes()))
	})
	if l.Verdict != pass {
		return
	}
	var got []queue.Message
	l = r.check("queue.receive", func() line {
		deadline := time.Now().Add(10 * time.Second)
		for len(got) < 2 && time.Now().Before(deadline) {
			ms, err := q.Receive(ctx, workURL, queue.ReceiveOptions{Max: 10, Wait: time.Second})
			if err != nil {
				return failQueue("ReceiveMessage", err)
			}
			got = append(got, ms...)
		}
		if len(got) < 2 {
			return bad("the queue accepted messages it did not deliver within 10 s: retry; if it persists, report it with the queue name", "ReceiveMessage: %d of 2 messages", len(got))
		}
		for _, m := range got {
			if m.Body != body || m.ReceiveCount != 1 || m.SentAt.IsZero() || m.Attributes[outbox.AttrSagaID] != "preflight-saga" || len(m.Attributes) != len(ev.Attributes()) {
				return bad("the queue changed a message on the way: the consumers' deduplication and tracing depend on the body and attributes coming back as sent",
					"ReceiveMessage: message %s came back with receive count %d, sent at %v, %d attributes", m.MessageID, m.ReceiveCount, m.SentAt, len(m.Attributes))
			}
		}
		return ok("ReceiveMessage (WaitTimeSeconds=1, MaxNumberOfMessages=10, all message attributes, ApproximateReceiveCount, SentTimestamp): body and attributes intact")
	})
	if l.Verdict != pass {
		return
	}
	r.check("queue.change-visibility", func() line {
		if err := q.ChangeVisibility(ctx, workURL, got[1].ReceiptHandle, 0); err != nil {
			return failQueue("ChangeMessageVisibility", err)
		}
		return ok("ChangeMessageVisibility to 0 (the advancer's backoff path)")
	})
	r.check("queue.delete-message", func() line {
		if err := q.Delete(ctx, workURL, got[0].ReceiptHandle); err != nil {
			return failQueue("DeleteMessage", err)
		}
		if err := q.Delete(ctx, workURL, got[0].ReceiptHandle); err != nil {
			return failQueue("DeleteMessage again (idempotent)", err)
		}
		return ok("DeleteMessage, twice (idempotent)")
	})
	r.check("queue.dead-letter", func() line {
		// The message made visible again was received once; MaxReceiveCount
		// is 1, so the next receive moves it to the dead-letter queue.
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := q.Receive(ctx, workURL, queue.ReceiveOptions{Max: 10, Wait: time.Second}); err != nil {
				return failQueue("ReceiveMessage (work queue)", err)
			}
			ms, err := q.Receive(ctx, dlqURL, queue.ReceiveOptions{Max: 10, Wait: time.Second})
			if err != nil {
				return failQueue("ReceiveMessage (dead-letter queue)", err)
			}
			for _, m := range ms {
				if m.MessageID == got[1].MessageID {
					if err := q.Delete(ctx, dlqURL, m.ReceiptHandle); err != nil {
						return failQueue("DeleteMessage (dead-letter queue)", err)
					}
					return ok("after MaxReceiveCount receives the message moved to the dead-letter queue, same MessageId")
				}
			}
		}
		return bad("the redrive policy did not move the message: saga-commands' dead letters would never reach saga-commands-dlq; check the RedrivePolicy the console shows for the queue",
			"message %s not in the dead-letter queue after 15 s", got[1].MessageID)
	})
	r.check("queue.attributes", func() line {
		for _, u := range []string{workURL, dlqURL} {
			if _, _, err := q.Depth(ctx, u); err != nil {
				return failQueue("GetQueueAttributes (ApproximateNumberOfMessages*)", err)
			}
		}
		return ok("GetQueueAttributes: approximate depth of both queues (the dlq_size gauge, the self-check)")
	})
	if admin != nil {
		for _, l := range admin.FIFO(ctx, prefix+"-f") {
			r.add(l)
		}
	}
}

func sameURL(got, want string) error {
	if got == want {
		return nil
	}
	return fmt.Errorf("URL %q, first call returned %q", got, want)
}

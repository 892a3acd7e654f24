package ymq

import (
	"context"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// Receive implements queue.Queue with ReceiveMessage, asking for the
// ApproximateReceiveCount and SentTimestamp system attributes and all message
// attributes. Wait and VisibilityTimeout are rounded up to whole seconds.
func (q *Queue) Receive(ctx context.Context, queueURL string, opts queue.ReceiveOptions) ([]queue.Message, error) {
	target, err := q.target(queueURL)
	if err != nil {
		return nil, err
	}
	if opts, err = queue.CheckReceive(opts); err != nil {
		return nil, err
	}
	out, err := q.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:              target,
		MaxNumberOfMessages:   int32(opts.Max),
		WaitTimeSeconds:       seconds(opts.Wait),
		VisibilityTimeout:     seconds(opts.VisibilityTimeout), // 0 = queue default
		MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameApproximateReceiveCount,
			types.MessageSystemAttributeNameSentTimestamp,
		},
	})
	if err != nil {
		return nil, wrap(err, "receive messages")
	}
	msgs := make([]queue.Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msg, err := fromSQS(m)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// fromSQS converts a received message. Missing system attributes leave zero
// values; malformed ones are an Internal error.
func fromSQS(m types.Message) (queue.Message, error) {
	msg := queue.Message{
		MessageID:     aws.ToString(m.MessageId),
		ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body:          aws.ToString(m.Body),
	}
	if s, ok := m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)]; ok && s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return msg, apperr.Wrap(apperr.Internal, err, "ymq: bad ApproximateReceiveCount %q", s)
		}
		msg.ReceiveCount = n
	}
	if s, ok := m.Attributes[string(types.MessageSystemAttributeNameSentTimestamp)]; ok && s != "" {
		millis, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return msg, apperr.Wrap(apperr.Internal, err, "ymq: bad SentTimestamp %q", s)
		}
		msg.SentAt = time.UnixMilli(millis)
	}
	for name, v := range m.MessageAttributes {
		if v.StringValue == nil { // Binary attributes are not part of the port
			continue
		}
		if msg.Attributes == nil {
			msg.Attributes = make(map[string]string, len(m.MessageAttributes))
		}
		msg.Attributes[name] = *v.StringValue
	}
	return msg, nil
}

// Delete implements queue.Queue. ReceiptHandleIsInvalid counts as success:
// SQS answers it for a handle whose message is already gone (kumo does for a
// second delete), and Delete is idempotent. SQS also uses that code for a
// malformed handle, which is thus not reported either.
func (q *Queue) Delete(ctx context.Context, queueURL, receiptHandle string) error {
	target, err := q.target(queueURL)
	if err != nil {
		return err
	}
	if err := queue.CheckReceiptHandle(receiptHandle); err != nil {
		return err
	}
	_, err = q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: target, ReceiptHandle: aws.String(receiptHandle)})
	if err != nil && !hasCode(err, "ReceiptHandleIsInvalid") {
		return wrap(err, "delete message")
	}
	return nil
}

// ChangeVisibility implements queue.Queue; d is rounded up to whole seconds.
// ReceiptHandleIsInvalid and MessageNotInflight are reported as NotFound.
func (q *Queue) ChangeVisibility(ctx context.Context, queueURL, receiptHandle string, d time.Duration) error {
	target, err := q.target(queueURL)
	if err != nil {
		return err
	}
	if err := queue.CheckVisibility(receiptHandle, d); err != nil {
		return err
	}
	_, err = q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl:          target,
		ReceiptHandle:     aws.String(receiptHandle),
		VisibilityTimeout: seconds(d),
	})
	if hasCode(err, "ReceiptHandleIsInvalid", "MessageNotInflight") {
		return apperr.Wrap(apperr.NotFound, err, "ymq: no message in flight with this receipt handle")
	}
	return wrap(err, "change message visibility")
}

// Depth implements queue.Queue with the ApproximateNumberOfMessages and
// ApproximateNumberOfMessagesNotVisible queue attributes.
func (q *Queue) Depth(ctx context.Context, queueURL string) (visible, inFlight int, err error) {
	target, err := q.target(queueURL)
	if err != nil {
		return 0, 0, err
	}
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: target,
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		},
	})
	if err != nil {
		return 0, 0, wrap(err, "get queue depth")
	}
	visible, err = intAttr(out.Attributes, types.QueueAttributeNameApproximateNumberOfMessages)
	if err != nil {
		return 0, 0, err
	}
	inFlight, err = intAttr(out.Attributes, types.QueueAttributeNameApproximateNumberOfMessagesNotVisible)
	return visible, inFlight, err
}

func intAttr(attrs map[string]string, name types.QueueAttributeName) (int, error) {
	n, err := strconv.Atoi(attrs[string(name)])
	if err != nil {
		return 0, apperr.Wrap(apperr.Internal, err, "ymq: bad queue attribute %s", name)
	}
	return n, nil
}

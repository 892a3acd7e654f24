package ymq

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// seconds rounds d up to whole seconds, the SQS API's unit.
func seconds(d time.Duration) int32 {
	return int32((d + time.Second - 1) / time.Second)
}

// Ensure implements queue.Queue with CreateQueue (attributes
// VisibilityTimeout and, with MaxReceiveCount, RedrivePolicy naming the
// dead-letter queue's ARN). If the queue exists with other attributes
// (QueueNameExists) it sets them with SetQueueAttributes, which needs the
// ymq.admin role. A redrive policy is never removed.
func (q *Queue) Ensure(ctx context.Context, spec queue.QueueSpec) (string, error) {
	if err := queue.CheckSpec(spec); err != nil {
		return "", err
	}
	vis := spec.VisibilityTimeout
	if vis == 0 {
		vis = queue.DefaultVisibilityTimeout
	}
	attrs := map[string]string{"VisibilityTimeout": strconv.Itoa(int(seconds(vis)))}
	if spec.MaxReceiveCount > 0 {
		arn, err := q.queueARN(ctx, spec.DeadLetterQueueURL)
		if err != nil {
			return "", err
		}
		policy, err := json.Marshal(struct {
			DeadLetterTargetArn string `json:"deadLetterTargetArn"`
			MaxReceiveCount     int    `json:"maxReceiveCount"`
		}{arn, spec.MaxReceiveCount})
		if err != nil {
			return "", apperr.Wrap(apperr.Internal, err, "ymq: encode redrive policy")
		}
		attrs["RedrivePolicy"] = string(policy)
	}
	out, err := q.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(spec.Name), Attributes: attrs})
	if err == nil {
		return aws.ToString(out.QueueUrl), nil
	}
	if !hasCode(err, "QueueNameExists", "QueueAlreadyExists") {
		return "", wrap(err, "create queue "+spec.Name)
	}
	got, err := q.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(spec.Name)})
	if err != nil {
		return "", wrap(err, "get queue URL "+spec.Name)
	}
	target, err := q.target(aws.ToString(got.QueueUrl))
	if err != nil {
		return "", err
	}
	if _, err := q.client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: target, Attributes: attrs}); err != nil {
		return "", wrap(err, "set attributes of queue "+spec.Name)
	}
	return aws.ToString(got.QueueUrl), nil
}

// queueARN reads a queue's ARN (the redrive policy names the DLQ by ARN).
func (q *Queue) queueARN(ctx context.Context, queueURL string) (string, error) {
	target, err := q.target(queueURL)
	if err != nil {
		return "", err
	}
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl:       target,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn},
	})
	if err != nil {
		return "", wrap(err, "get dead-letter queue ARN")
	}
	arn := out.Attributes[string(types.QueueAttributeNameQueueArn)]
	if arn == "" {
		return "", apperr.New(apperr.Internal, "ymq: dead-letter queue has no QueueArn attribute")
	}
	return arn, nil
}

// SendBatch implements queue.Queue with one SendMessageBatch call for the
// valid entries. If every sent entry failed because the queue does not
// exist (an emulator reports that per entry), the call fails as a whole with
// NotFound.
func (q *Queue) SendBatch(ctx context.Context, queueURL string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	target, err := q.target(queueURL)
	if err != nil {
		return nil, err
	}
	entryErrs, err := queue.CheckBatch(msgs)
	if err != nil {
		return nil, err
	}
	results := make([]queue.SendResult, len(msgs))
	index := make(map[string]int, len(msgs))
	var entries []types.SendMessageBatchRequestEntry
	for i, m := range msgs {
		results[i] = queue.SendResult{ID: m.ID, Err: entryErrs[i]}
		if entryErrs[i] != nil {
			continue
		}
		index[m.ID] = i
		entries = append(entries, types.SendMessageBatchRequestEntry{
			Id:                aws.String(m.ID),
			MessageBody:       aws.String(m.Body),
			DelaySeconds:      seconds(m.Delay),
			MessageAttributes: toAttributes(m.Attributes),
		})
	}
	if len(entries) == 0 {
		return results, nil
	}
	out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: target, Entries: entries})
	if err != nil {
		return nil, wrap(err, "send message batch")
	}
	answered := 0
	for _, s := range out.Successful {
		if i, ok := index[aws.ToString(s.Id)]; ok {
			results[i].MessageID = aws.ToString(s.MessageId)
			delete(index, aws.ToString(s.Id))
			answered++
		}
	}
	notFound := 0
	for _, f := range out.Failed {
		i, ok := index[aws.ToString(f.Id)]
		if !ok {
			continue
		}
		delete(index, aws.ToString(f.Id))
		answered++
		kind := entryKind(aws.ToString(f.Code), f.SenderFault)
		if kind == apperr.NotFound {
			notFound++
		}
		results[i].Err = apperr.New(kind, "ymq: entry %s failed: %s", msgs[i].ID, aws.ToString(f.Code))
	}
	if notFound == len(entries) {
		return nil, apperr.New(apperr.NotFound, "ymq: queue %s does not exist", queueURL)
	}
	for _, i := range index { // entries the service did not answer for
		results[i].Err = apperr.New(apperr.Transient, "ymq: no result for entry %s", msgs[i].ID)
	}
	return results, nil
}

// toAttributes converts attributes to SQS String message attributes.
func toAttributes(attrs map[string]string) map[string]types.MessageAttributeValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]types.MessageAttributeValue, len(attrs))
	for k, v := range attrs {
		out[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	return out
}

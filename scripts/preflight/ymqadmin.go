package main

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// ymqAdmin is the queueAdmin of Message Queue (or an SQS emulator): the
// same SDK, endpoint, region and static key as the ymq adapter.
type ymqAdmin struct {
	client   *sqs.Client
	endpoint *url.URL
}

func newYMQAdmin(endpoint, region, keyID, secret string) (*ymqAdmin, error) {
	ep, err := url.Parse(endpoint)
	if err != nil {
		return nil, err
	}
	return &ymqAdmin{endpoint: ep, client: sqs.New(sqs.Options{
		Region: region, BaseEndpoint: aws.String(strings.TrimSuffix(endpoint, "/")),
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(keyID, secret, "")),
	})}, nil
}

// target points a queue URL at the configured endpoint (emulators name
// another host in the URLs they return), as the adapter does.
func (a *ymqAdmin) target(queueURL string) *string {
	u, err := url.Parse(queueURL)
	if err != nil {
		return aws.String(queueURL)
	}
	u.Scheme, u.Host = a.endpoint.Scheme, a.endpoint.Host
	return aws.String(u.String())
}

func (a *ymqAdmin) DeleteQueue(ctx context.Context, queueURL string) error {
	_, err := a.client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: a.target(queueURL)})
	return err
}

// FIFO probes a temporary FIFO queue with the calls a FIFO consumer makes:
// CreateQueue (FifoQueue), SendMessageBatch with MessageGroupId and
// MessageDeduplicationId, ReceiveMessage, DeleteMessageBatch, DeleteQueue.
// ordersaga's queues are standard today; this proves the protocol for
// FIFO before anything relies on it.
func (a *ymqAdmin) FIFO(ctx context.Context, name string) (lines []line) {
	add := func(check string, start time.Time, l line) bool {
		l.Check, l.Took = check, time.Since(start)
		lines = append(lines, l)
		return l.Verdict == pass
	}
	start := time.Now()
	out, err := a.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name + ".fifo"),
		Attributes: map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"}})
	if !add("queue.fifo-create", start, lineOf(err, "CreateQueue "+name+".fifo (FifoQueue=true)")) {
		return lines
	}
	qurl := a.target(aws.ToString(out.QueueUrl))
	defer func() {
		start := time.Now()
		_, err := a.client.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: qurl})
		add("queue.fifo-delete", start, lineOf(err, "DeleteQueue "+name+".fifo"))
	}()
	start = time.Now()
	_, err = a.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qurl, Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String(`{"n":1}`), MessageGroupId: aws.String("order-1"), MessageDeduplicationId: aws.String("event-1"),
			MessageAttributes: map[string]types.MessageAttributeValue{"event_type": {DataType: aws.String("String"), StringValue: aws.String("order.created")}}},
		{Id: aws.String("b"), MessageBody: aws.String(`{"n":2}`), MessageGroupId: aws.String("order-1"), MessageDeduplicationId: aws.String("event-2")},
	}})
	if !add("queue.fifo-send-batch", start, lineOf(err, "SendMessageBatch with MessageGroupId and MessageDeduplicationId")) {
		return lines
	}
	start = time.Now()
	recv, err := a.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qurl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll}})
	if err == nil && len(recv.Messages) == 0 {
		return append(lines, bad("retry; if it persists, FIFO queues do not deliver on this endpoint", "ReceiveMessage: nothing delivered"))
	}
	if !add("queue.fifo-receive", start, lineOf(err, "ReceiveMessage")) {
		return lines
	}
	start = time.Now()
	var entries []types.DeleteMessageBatchRequestEntry
	for i, m := range recv.Messages {
		entries = append(entries, types.DeleteMessageBatchRequestEntry{Id: aws.String(string(rune('a' + i))), ReceiptHandle: m.ReceiptHandle})
	}
	_, err = a.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: qurl, Entries: entries})
	add("queue.fifo-delete-batch", start, lineOf(err, "DeleteMessageBatch"))
	return lines
}

func lineOf(err error, call string) line {
	if err != nil {
		return failQueue(call, err)
	}
	return ok("%s", call)
}

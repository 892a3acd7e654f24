package main

import (
	"context"
	"fmt"
	"os"

	"ordersaga/shared/adapters/ymq"
	"ordersaga/shared/domain/queue"
)

// YMQSender sends to a Message Queue queue through the ymq adapter, with
// the operator's static key (YMQ_ACCESS_KEY_ID and YMQ_SECRET_ACCESS_KEY,
// or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; YMQ_ENDPOINT if not the
// default). The key's service account needs ymq.writer.
func YMQSender(queueURL string) (func(context.Context, string, map[string]string) (string, error), error) {
	keyID, secret := firstEnv("YMQ_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID"), firstEnv("YMQ_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY")
	if keyID == "" || secret == "" {
		return nil, fmt.Errorf("-dlq-url names a Message Queue queue: export YMQ_ACCESS_KEY_ID and YMQ_SECRET_ACCESS_KEY (a static key with ymq.writer; docs/deploy.md)")
	}
	q, err := ymq.New(ymq.Config{Endpoint: os.Getenv("YMQ_ENDPOINT"), Region: os.Getenv("YMQ_REGION"), AccessKeyID: keyID, SecretAccessKey: secret})
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, body string, attrs map[string]string) (string, error) {
		res, err := q.SendBatch(ctx, queueURL, []queue.OutMessage{{ID: "smoke", Body: body, Attributes: attrs}})
		if err != nil {
			return "", err
		}
		if res[0].Err != nil {
			return "", res[0].Err
		}
		return res[0].MessageID, nil
	}, nil
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

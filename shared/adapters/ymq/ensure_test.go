package ymq

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
)

// TestEnsureExistingQueueWithOtherAttributes covers the real-SQS path kumo
// never takes: CreateQueue answers QueueNameExists, so Ensure looks the queue
// up and sets the attributes (redrive policy naming the DLQ ARN).
func TestEnsureExistingQueueWithOtherAttributes(t *testing.T) {
	const dlqARN = "yrn:yc:ymq:ru-central1:b1g:orders-dlq"
	var actions []string
	var setAttrs map[string]any
	srv := fakeSQS(t, func(action string, req map[string]any) (int, any) {
		actions = append(actions, action)
		switch action {
		case "GetQueueAttributes":
			return 200, map[string]any{"Attributes": map[string]string{"QueueArn": dlqARN}}
		case "CreateQueue":
			return 400, apiError("QueueNameExists")
		case "GetQueueUrl":
			return 200, map[string]string{"QueueUrl": "https://elsewhere/b1g/dj6/orders"}
		case "SetQueueAttributes":
			setAttrs, _ = req["Attributes"].(map[string]any)
			return 200, map[string]any{}
		}
		return 400, apiError("InvalidAction")
	})
	url, err := newTestQueue(t, srv.URL).Ensure(context.Background(), queue.QueueSpec{
		Name: "orders", VisibilityTimeout: 90 * time.Second, MaxReceiveCount: 5,
		DeadLetterQueueURL: "https://elsewhere/b1g/dj6/orders-dlq",
	})
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if url != "https://elsewhere/b1g/dj6/orders" {
		t.Errorf("URL = %q, want the one the service returned", url)
	}
	want := []string{"GetQueueAttributes", "CreateQueue", "GetQueueUrl", "SetQueueAttributes"}
	if len(actions) != len(want) {
		t.Fatalf("actions = %v, want %v", actions, want)
	}
	for i := range want {
		if actions[i] != want[i] {
			t.Fatalf("actions = %v, want %v", actions, want)
		}
	}
	if setAttrs["VisibilityTimeout"] != "90" {
		t.Errorf("VisibilityTimeout = %v, want 90", setAttrs["VisibilityTimeout"])
	}
	var policy struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     int    `json:"maxReceiveCount"`
	}
	if s, _ := setAttrs["RedrivePolicy"].(string); json.Unmarshal([]byte(s), &policy) != nil ||
		policy.DeadLetterTargetArn != dlqARN || policy.MaxReceiveCount != 5 {
		t.Errorf("RedrivePolicy = %v, want ARN %s and 5", setAttrs["RedrivePolicy"], dlqARN)
	}
}

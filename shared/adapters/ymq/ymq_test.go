package ymq

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// fakeSQS serves the SQS JSON protocol: handle gets the action (from
// X-Amz-Target) and the decoded request, and returns a status and a body.
func fakeSQS(t *testing.T, handle func(action string, req map[string]any) (int, any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil {
			t.Errorf("fake SQS: bad request body %q: %v", b, err)
		}
		status, body := handle(strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AmazonSQS."), req)
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.WriteHeader(status)
		if body != nil {
			_ = json.NewEncoder(w).Encode(body)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func apiError(code string) map[string]string {
	return map[string]string{"__type": "com.amazonaws.sqs#" + code, "message": "test " + code}
}

func newTestQueue(t *testing.T, endpoint string) *Queue {
	t.Helper()
	q, err := New(Config{Endpoint: endpoint, AccessKeyID: "test", SecretAccessKey: "test", MaxAttempts: 1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return q
}

const foreignURL = "http://localhost:4566/000000000000/q"

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{AccessKeyID: "a", SecretAccessKey: "s"}, true},
		{"emulator", Config{Endpoint: "http://127.0.0.1:4566", AccessKeyID: "a", SecretAccessKey: "s"}, true},
		{"no key", Config{Endpoint: "http://127.0.0.1:4566"}, false},
		{"no secret", Config{AccessKeyID: "a"}, false},
		{"bad scheme", Config{Endpoint: "ftp://h", AccessKeyID: "a", SecretAccessKey: "s"}, false},
		{"no host", Config{Endpoint: "http://", AccessKeyID: "a", SecretAccessKey: "s"}, false},
		{"negative attempts", Config{AccessKeyID: "a", SecretAccessKey: "s", MaxAttempts: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if tc.ok != (err == nil) {
				t.Fatalf("New = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("kind = %v, want Invalid", apperr.KindOf(err))
			}
		})
	}
}

func TestTargetRewritesHost(t *testing.T) {
	q := newTestQueue(t, "https://message-queue.api.cloud.yandex.net/")
	tests := []struct{ in, want string }{
		{"http://localhost:4566/000000000000/q", "https://message-queue.api.cloud.yandex.net/000000000000/q"},
		{"https://message-queue.api.cloud.yandex.net/b1g/dj6/orders", "https://message-queue.api.cloud.yandex.net/b1g/dj6/orders"},
		{"http://user:pw@kumo:4566/1/q", "https://message-queue.api.cloud.yandex.net/1/q"},
	}
	for _, tc := range tests {
		got, err := q.target(tc.in)
		if err != nil || *got != tc.want {
			t.Errorf("target(%q) = %v, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "q", "http://host", "http://host/", "://x"} {
		if _, err := q.target(bad); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("target(%q) = %v, want Invalid", bad, err)
		}
	}
}

func TestKindOf(t *testing.T) {
	resp := func(status int, inner error) error {
		return &smithy.OperationError{ServiceID: "SQS", OperationName: "ReceiveMessage", Err: &awshttp.ResponseError{
			ResponseError: &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}}, Err: inner},
		}}
	}
	api := func(code string, fault smithy.ErrorFault) error {
		return &smithy.GenericAPIError{Code: code, Fault: fault}
	}
	tests := []struct {
		name string
		err  error
		want apperr.Kind
	}{
		{"throttled", resp(400, api("RequestThrottled", smithy.FaultClient)), apperr.Transient},
		{"no queue", resp(400, api("AWS.SimpleQueueService.NonExistentQueue", smithy.FaultClient)), apperr.NotFound},
		{"invalid", resp(400, api("InvalidParameterValue", smithy.FaultClient)), apperr.Invalid},
		{"access denied", resp(403, api("AccessDenied", smithy.FaultClient)), apperr.Forbidden},
		{"bad signature", resp(403, api("SignatureDoesNotMatch", smithy.FaultClient)), apperr.Unauthenticated},
		{"unknown 503", resp(503, api("Whatever", smithy.FaultUnknown)), apperr.Transient},
		{"unknown 429", resp(429, api("Whatever", smithy.FaultUnknown)), apperr.Transient},
		{"unknown 400", resp(400, api("Whatever", smithy.FaultClient)), apperr.Invalid},
		{"server fault no status", api("Whatever", smithy.FaultServer), apperr.Transient},
		{"network", &smithy.OperationError{Err: &smithyhttp.RequestSendError{Err: errors.New("connection refused")}}, apperr.Transient},
		{"deadline", fmt.Errorf("op: %w", context.DeadlineExceeded), apperr.Transient},
		{"unknown", errors.New("boom"), apperr.Internal},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := kindOf(tc.err); got != tc.want {
				t.Fatalf("kindOf = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestErrorsOverHTTP checks the mapping end to end through the SDK's
// deserializers, against a fake endpoint.
func TestErrorsOverHTTP(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   any
		want   apperr.Kind
	}{
		{"queue does not exist", 400, apiError("QueueDoesNotExist"), apperr.NotFound},
		{"legacy queue code", 400, apiError("AWS.SimpleQueueService.NonExistentQueue"), apperr.NotFound},
		{"throttled", 400, apiError("RequestThrottled"), apperr.Transient},
		{"invalid parameter", 400, apiError("InvalidParameterValue"), apperr.Invalid},
		{"access denied", 403, apiError("AccessDenied"), apperr.Forbidden},
		{"server error", 500, apiError("InternalError"), apperr.Transient},
		{"bare 503", 503, nil, apperr.Transient},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeSQS(t, func(string, map[string]any) (int, any) { return tc.status, tc.body })
			_, _, err := newTestQueue(t, srv.URL).Depth(context.Background(), foreignURL)
			if got := apperr.KindOf(err); got != tc.want {
				t.Fatalf("Depth err = %v (kind %v), want %v", err, got, tc.want)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = newTestQueue(t, "http://"+addr).Receive(context.Background(), foreignURL, queue.ReceiveOptions{})
		if !apperr.Is(err, apperr.Transient) {
			t.Fatalf("Receive err = %v (kind %v), want Transient", err, apperr.KindOf(err))
		}
	})
}

func TestReceiveConvertsAndRewrites(t *testing.T) {
	var gotURL string
	srv := fakeSQS(t, func(action string, req map[string]any) (int, any) {
		gotURL, _ = req["QueueUrl"].(string)
		if action != "ReceiveMessage" {
			return 400, apiError("InvalidAction")
		}
		if req["MaxNumberOfMessages"] != 5.0 || req["WaitTimeSeconds"] != 2.0 || req["VisibilityTimeout"] != 1.0 {
			t.Errorf("request = %v, want Max 5, Wait 2 (1.5s rounded up), Visibility 1 (1ms rounded up)", req)
		}
		sum := md5.Sum([]byte("hello"))
		return 200, map[string]any{"Messages": []any{map[string]any{
			"MessageId": "m-1", "ReceiptHandle": "rh-1", "Body": "hello", "MD5OfBody": hex.EncodeToString(sum[:]),
			"Attributes": map[string]string{"ApproximateReceiveCount": "3", "SentTimestamp": "1700000000123"},
			"MessageAttributes": map[string]any{
				"event_type": map[string]string{"DataType": "String", "StringValue": "saga.advance"},
				"n":          map[string]string{"DataType": "Number", "StringValue": "7"},
				"blob":       map[string]string{"DataType": "Binary", "BinaryValue": "AAE="},
			},
		}}}
	})
	q := newTestQueue(t, srv.URL)
	msgs, err := q.Receive(context.Background(), foreignURL, queue.ReceiveOptions{Max: 5, Wait: 1500 * time.Millisecond, VisibilityTimeout: time.Millisecond})
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	if want := srv.URL + "/000000000000/q"; gotURL != want {
		t.Errorf("QueueUrl sent = %q, want %q (host rewritten to the endpoint)", gotURL, want)
	}
	want := queue.Message{MessageID: "m-1", ReceiptHandle: "rh-1", Body: "hello", ReceiveCount: 3,
		SentAt: time.UnixMilli(1700000000123), Attributes: map[string]string{"event_type": "saga.advance", "n": "7"}}
	if len(msgs) != 1 || fmt.Sprint(msgs[0]) != fmt.Sprint(want) {
		t.Fatalf("Receive = %+v, want [%+v]", msgs, want)
	}
}

func TestSendBatchEntryFailures(t *testing.T) {
	tests := []struct {
		name      string
		resp      map[string]any
		wantCall  apperr.Kind // Internal = no whole-call error
		wantKinds []apperr.Kind
	}{
		{
			name: "mixed",
			resp: map[string]any{
				"Successful": []any{map[string]any{"Id": "a", "MessageId": "m-a", "MD5OfMessageBody": md5hex("A")}},
				"Failed": []any{
					map[string]any{"Id": "b", "Code": "InvalidMessageContents", "SenderFault": true},
					map[string]any{"Id": "c", "Code": "InternalError", "SenderFault": false},
				},
			},
			wantKinds: []apperr.Kind{0, apperr.Invalid, apperr.Transient, apperr.Transient}, // d: no answer
		},
		{
			name: "queue missing per entry",
			resp: map[string]any{"Failed": []any{
				map[string]any{"Id": "a", "Code": "AWS.SimpleQueueService.NonExistentQueue", "SenderFault": true},
				map[string]any{"Id": "b", "Code": "AWS.SimpleQueueService.NonExistentQueue", "SenderFault": true},
				map[string]any{"Id": "c", "Code": "AWS.SimpleQueueService.NonExistentQueue", "SenderFault": true},
				map[string]any{"Id": "d", "Code": "AWS.SimpleQueueService.NonExistentQueue", "SenderFault": true},
			}},
			wantCall: apperr.NotFound,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakeSQS(t, func(string, map[string]any) (int, any) { return 200, tc.resp })
			msgs := []queue.OutMessage{{ID: "a", Body: "A"}, {ID: "b", Body: "B"}, {ID: "c", Body: "C"}, {ID: "d", Body: "D"}}
			res, err := newTestQueue(t, srv.URL).SendBatch(context.Background(), foreignURL, msgs)
			if tc.wantCall != 0 {
				if !apperr.Is(err, tc.wantCall) {
					t.Fatalf("SendBatch err = %v, want kind %v", err, tc.wantCall)
				}
				return
			}
			if err != nil {
				t.Fatalf("SendBatch: %v", err)
			}
			for i, k := range tc.wantKinds {
				if k == 0 {
					if res[i].Err != nil || res[i].MessageID != "m-"+msgs[i].ID {
						t.Errorf("result %d = %+v, want success", i, res[i])
					}
					continue
				}
				if !apperr.Is(res[i].Err, k) {
					t.Errorf("result %d err = %v, want kind %v", i, res[i].Err, k)
				}
			}
		})
	}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

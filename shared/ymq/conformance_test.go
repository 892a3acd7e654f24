package ymq

import (
	"os"
	"testing"
	"time"

	"ordersaga/shared/queue"
	"ordersaga/shared/queuetest"
)

// endpointEnv names the SQS emulator endpoint that scripts/test.sh exports.
const endpointEnv = "ORDERSAGA_SQS_ENDPOINT"

// emulatorEndpoint returns the emulator's URL, skipping the test when it is
// not running, except in CI where the emulator is required.
func emulatorEndpoint(t *testing.T) string {
	t.Helper()
	ep := os.Getenv(endpointEnv)
	if ep != "" {
		return ep
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not set: the SQS emulator is required in CI; run scripts/test.sh", endpointEnv)
	}
	t.Skipf("%s is not set: start the SQS emulator (source scripts/lib/sqsemulator.sh; sqsemulator_start) or run scripts/test.sh", endpointEnv)
	return ""
}

// TestConformance runs the queue port's suite against the kumo emulator.
func TestConformance(t *testing.T) {
	ep := emulatorEndpoint(t)
	queuetest.Run(t, func(t *testing.T) queue.Queue {
		q, err := New(Config{Endpoint: ep, AccessKeyID: "test", SecretAccessKey: "test"})
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		return q
	}, queuetest.Features{
		TimeUnit: time.Second, // SQS visibility, delays and waits are whole seconds
		// kumo wakes a long poll only when a message is sent; a message that
		// becomes visible during the wait is returned by the next Receive.
		LongPollWakesOnVisible: false,
	})
}

package ymq

import (
	"os"
	"testing"
	"time"

	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/queue/queuetest"
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

// Credentials of the conformance run: the emulator accepts any key, so they
// default to test/test; set them (and ORDERSAGA_SQS_ENDPOINT to
// https://message-queue.api.cloud.yandex.net) to run the suite against the
// real Message Queue with a static key whose service account holds
// ymq.admin (docs/deploy.md, "Preflight").
const (
	keyIDEnv  = "ORDERSAGA_SQS_ACCESS_KEY_ID"
	secretEnv = "ORDERSAGA_SQS_SECRET_ACCESS_KEY"
	regionEnv = "ORDERSAGA_SQS_REGION"
)

// conformanceConfig is the adapter configuration of the conformance run:
// the endpoint and, when set, the credentials and region of the
// environment.
func conformanceConfig(t *testing.T) Config {
	t.Helper()
	c := Config{Endpoint: emulatorEndpoint(t), AccessKeyID: "test", SecretAccessKey: "test", Region: os.Getenv(regionEnv)}
	id, secret := os.Getenv(keyIDEnv), os.Getenv(secretEnv)
	if (id == "") != (secret == "") {
		t.Fatalf("set both %s and %s, or neither", keyIDEnv, secretEnv)
	}
	if id != "" {
		c.AccessKeyID, c.SecretAccessKey = id, secret
	}
	return c
}

// TestConformance runs the queue port's suite against the kumo emulator,
// or against the endpoint and key the environment names.
func TestConformance(t *testing.T) {
	cfg := conformanceConfig(t)
	queuetest.Run(t, func(t *testing.T) queue.Queue {
		q, err := New(cfg)
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

package ymq

import (
	"testing"

	"ordersaga/shared/domain/queue/queuetest"
)

// TestTextRuleAgainstEmulator: everything the API boundary's text rule
// (package textrule) accepts is accepted by the SQS emulator as body and as
// attribute value and comes back unchanged; what it refuses, the adapter
// refuses before sending.
func TestTextRuleAgainstEmulator(t *testing.T) {
	ep := emulatorEndpoint(t)
	q, err := New(Config{Endpoint: ep, AccessKeyID: "test", SecretAccessKey: "test"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	queuetest.RunTextRule(t, q)
}

package saga_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/saga"
)

// TestCommandGoldenFixtures pins the persisted saga.advance payloads: the
// first command the order API writes and the ones the advancer writes.
func TestCommandGoldenFixtures(t *testing.T) {
	created := saga.FirstCommand("saga-1").Encode()
	tests := []struct {
		file    string
		encoded []byte // what the writer produces today
		want    saga.Command
	}{
		{"advance_created.json", created, saga.Command{SagaID: "saga-1", Reason: "created", State: saga.StatePending}},
		{"advance_retry.json", saga.Command{SagaID: "saga-1", Reason: "retry", State: saga.StateRunning, Step: 2, Attempt: 3}.Encode(),
			saga.Command{SagaID: "saga-1", Reason: "retry", State: saga.StateRunning, Step: 2, Attempt: 3}},
		{"advance_compensate.json", saga.Command{SagaID: "saga-1", Reason: "compensate", State: saga.StateCompensating, Step: 1}.Encode(),
			saga.Command{SagaID: "saga-1", Reason: "compensate", State: saga.StateCompensating, Step: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(bytes.TrimSpace(golden), tc.encoded) {
				t.Errorf("encoding changed:\n got %s\nwant %s", tc.encoded, bytes.TrimSpace(golden))
			}
			got, err := saga.DecodeCommand(golden)
			if err != nil || got != tc.want {
				t.Errorf("decode: got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestDecodeCommandRejects(t *testing.T) {
	for _, body := range []string{``, `[]`, `{"saga_id":1}`, `{"reason":"x"}`, `{"saga_id":"s","step":-1}`,
		`{"saga_id":"s","attempt":-2}`, `{"saga_id":"s","state":"completed"}`, `{"saga_id":"s","state":"weird"}`} {
		if _, err := saga.DecodeCommand([]byte(body)); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("saga.DecodeCommand(%s): got %v, want Invalid", body, err)
		}
	}
}

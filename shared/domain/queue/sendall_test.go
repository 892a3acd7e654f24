package queue

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

// recorder is a Queue whose SendBatch records batches; failAt makes the
// call with that index fail as a whole.
type recorder struct {
	batches [][]OutMessage
	failAt  int
	failErr error
}

var _ Queue = (*recorder)(nil)

func (r *recorder) SendBatch(_ context.Context, _ string, msgs []OutMessage) ([]SendResult, error) {
	r.batches = append(r.batches, msgs)
	if len(r.batches)-1 == r.failAt {
		return nil, r.failErr
	}
	entryErrs, err := CheckBatch(msgs)
	if err != nil {
		return nil, err
	}
	out := make([]SendResult, len(msgs))
	for i, m := range msgs {
		out[i] = SendResult{ID: m.ID, Err: entryErrs[i]}
		if entryErrs[i] == nil {
			out[i].MessageID = "mid-" + m.ID
		}
	}
	return out, nil
}

func (r *recorder) Ensure(context.Context, QueueSpec) (string, error) { return "", nil }
func (r *recorder) Receive(context.Context, string, ReceiveOptions) ([]Message, error) {
	return nil, nil
}
func (r *recorder) Delete(context.Context, string, string) error { return nil }
func (r *recorder) ChangeVisibility(context.Context, string, string, time.Duration) error {
	return nil
}
func (r *recorder) Depth(context.Context, string) (int, int, error) { return 0, 0, nil }

func TestSendAllChunks(t *testing.T) {
	big := strings.Repeat("x", 100*1024)
	tests := []struct {
		name  string
		msgs  []OutMessage
		sizes []int
	}{
		{"none", nil, nil},
		{"one", batchOf(1), []int{1}},
		{"ten", batchOf(10), []int{10}},
		{"eleven", batchOf(11), []int{10, 1}},
		{"twenty five", batchOf(25), []int{10, 10, 5}},
		{"by size", []OutMessage{{ID: "a", Body: big}, {ID: "b", Body: big}, {ID: "c", Body: big}, {ID: "d", Body: "s"}}, []int{2, 2}},
		{"oversized alone", []OutMessage{{ID: "a", Body: "s"}, {ID: "b", Body: big + big + big}, {ID: "c", Body: "s"}}, []int{1, 1, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{failAt: -1}
			res, err := SendAll(context.Background(), r, "u", tc.msgs)
			if err != nil {
				t.Fatalf("SendAll err = %v", err)
			}
			var sizes []int
			for _, b := range r.batches {
				sizes = append(sizes, len(b))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tc.sizes) {
				t.Errorf("batch sizes = %v, want %v", sizes, tc.sizes)
			}
			if len(res) != len(tc.msgs) {
				t.Fatalf("len(results) = %d, want %d", len(res), len(tc.msgs))
			}
			for i, m := range tc.msgs {
				if res[i].ID != m.ID {
					t.Errorf("results[%d].ID = %q, want %q", i, res[i].ID, m.ID)
				}
				if wantErr := CheckMessage(m) != nil; (res[i].Err != nil) != wantErr {
					t.Errorf("results[%d].Err = %v, want error %v", i, res[i].Err, wantErr)
				}
			}
		})
	}
}

func TestSendAllStopsOnWholeBatchFailure(t *testing.T) {
	fail := apperr.New(apperr.Transient, "down")
	r := &recorder{failAt: 1, failErr: fail}
	msgs := batchOf(25)
	res, err := SendAll(context.Background(), r, "u", msgs)
	if err != fail {
		t.Fatalf("SendAll err = %v, want %v", err, fail)
	}
	if len(r.batches) != 2 {
		t.Errorf("batches sent = %d, want 2 (stop after the failure)", len(r.batches))
	}
	if len(res) != 25 {
		t.Fatalf("len(results) = %d, want 25", len(res))
	}
	for i, sr := range res {
		if sr.ID != msgs[i].ID {
			t.Errorf("results[%d].ID = %q, want %q", i, sr.ID, msgs[i].ID)
		}
		if wantFail := i >= 10; (sr.Err != nil) != wantFail {
			t.Errorf("results[%d].Err = %v, want failed %v", i, sr.Err, wantFail)
		}
	}
}

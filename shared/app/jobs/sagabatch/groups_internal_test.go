package sagabatch

import (
	"reflect"
	"testing"

	"ordersaga/shared/app/orchestrator"
	"ordersaga/shared/domain/saga"
)

func TestSagaGroupsKeepOneSagasMessagesTogetherInOrder(t *testing.T) {
	d := func(sagaID string) Delivery {
		if sagaID == "" {
			return Delivery{Message: orchestrator.Message{Body: []byte("{not json")}}
		}
		return Delivery{Message: orchestrator.Message{Body: saga.FirstCommand(sagaID).Encode()}}
	}
	msgs := []Delivery{d("a"), d("b"), d("a"), d(""), d("c"), d("b"), d(""), d("a")}
	got := sagaGroups(msgs)
	want := [][]int{{0, 2, 7}, {1, 5}, {3}, {4}, {6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("groups %v, want %v", got, want)
	}
}

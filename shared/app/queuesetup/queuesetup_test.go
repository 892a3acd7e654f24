package queuesetup_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"ordersaga/shared/app/queuesetup"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// fakeQueue records the specs it was asked to create; the methods Ensure
// does not call are left to the embedded nil interface.
type fakeQueue struct {
	queue.Queue
	created []queue.QueueSpec
}

func (f *fakeQueue) Ensure(_ context.Context, spec queue.QueueSpec) (string, error) {
	f.created = append(f.created, spec)
	return "url-" + spec.Name, nil
}

func TestNewRequiresAQueue(t *testing.T) {
	if _, err := queuesetup.New(queuesetup.Config{}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("no queue: err = %v, want Invalid", err)
	}
}

func TestEnsureCreatesDeadLetterQueuesFirst(t *testing.T) {
	q := &fakeQueue{}
	s, err := queuesetup.New(queuesetup.Config{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	urls, err := s.Ensure(context.Background(), []queuesetup.Queue{
		{Name: "saga-commands", VisibilityTimeout: 30 * time.Second, MaxReceiveCount: 5, DeadLetterQueue: "saga-commands-dlq"},
		{Name: "saga-commands-dlq"},
		{Name: "order-events"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range q.created {
		order = append(order, c.Name)
	}
	if got := strings.Join(order, ","); got != "saga-commands-dlq,order-events,saga-commands" {
		t.Errorf("created %s, want the dead-letter queue before the queue naming it", got)
	}
	last := q.created[2]
	if last.DeadLetterQueueURL != "url-saga-commands-dlq" || last.MaxReceiveCount != 5 || last.VisibilityTimeout != 30*time.Second {
		t.Errorf("saga-commands spec %+v", last)
	}
	if len(urls) != 3 || urls["order-events"] != "url-order-events" {
		t.Errorf("urls %v", urls)
	}
}

func TestEnsureRefusesAnUnknownDeadLetterQueue(t *testing.T) {
	q := &fakeQueue{}
	s, _ := queuesetup.New(queuesetup.Config{Queue: q})
	_, err := s.Ensure(context.Background(), []queuesetup.Queue{{Name: "a", DeadLetterQueue: "missing"}, {Name: "b"}})
	if err == nil || !strings.Contains(err.Error(), "unresolvable dead-letter queues: 1") {
		t.Errorf("err = %v, want the unresolvable count", err)
	}
	if len(q.created) != 1 || q.created[0].Name != "b" {
		t.Errorf("created %+v, want only b", q.created)
	}
}

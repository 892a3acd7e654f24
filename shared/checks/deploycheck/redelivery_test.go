package deploycheck

import (
	"path/filepath"
	"strings"
	"testing"

	"ordersaga/shared/wiring/triggers"
)

// redeliveryProblems lists the queue triggers whose queue would redeliver a
// failing batch without end: the retry-amplification bound
// (scripts/capacity -retries, docs/capacity.md) multiplies by the queue's
// max_receive_count, so every triggered queue needs a dead-letter queue and
// a count within the platform's 1..1000.
func redeliveryProblems(tf triggers.File) []string {
	queues := map[string]triggers.Queue{}
	for _, q := range tf.Queues {
		queues[q.Name] = q
	}
	var out []string
	for _, qt := range tf.QueueTriggers {
		q := queues[qt.Queue]
		if q.DeadLetterQueue == "" || q.MaxReceiveCount < 1 || q.MaxReceiveCount > 1000 {
			out = append(out, "queue trigger "+qt.Name+": queue "+qt.Queue+" needs a dead_letter_queue and a max_receive_count in 1..1000, or a failing batch is redelivered without end")
		}
	}
	return out
}

func TestTriggeredQueuesBoundRedelivery(t *testing.T) {
	tf, err := triggers.Load(filepath.Join(repoRoot, "triggers", "triggers.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	report(t, redeliveryProblems(tf))

	// Terraform must set the count the YAML states (the bound reads the YAML).
	d := load(t)
	found := false
	for _, b := range d.Root.blocks("resource", "yandex_message_queue") {
		a, ok := b.Body.Attributes["redrive_policy"]
		if !ok {
			continue
		}
		found = true
		var src []byte
		for _, f := range d.Root.Files {
			if f.Path == a.SrcRange.Filename {
				src = f.Src
			}
		}
		text := string(a.Expr.Range().SliceBytes(src))
		if !strings.Contains(text, "maxReceiveCount") || !strings.Contains(text, "each.value.max_receive_count") {
			t.Errorf("%s: redrive_policy must set maxReceiveCount = each.value.max_receive_count (from triggers.yaml), got %s", a.SrcRange, text)
		}
	}
	if !found {
		t.Error("no yandex_message_queue has a redrive_policy: the saga-commands queue would redeliver a failing batch without end")
	}
}

func TestRedeliveryRuleFindsUnboundedQueues(t *testing.T) {
	tf := triggers.File{
		Queues: []triggers.Queue{{Name: "bounded", MaxReceiveCount: 5, DeadLetterQueue: "dlq"}, {Name: "dlq"}, {Name: "endless"}},
		QueueTriggers: []triggers.QueueTrigger{
			{Name: "ok", Queue: "bounded"}, {Name: "bad", Queue: "endless"},
		},
	}
	p := redeliveryProblems(tf)
	if len(p) != 1 || !strings.Contains(p[0], "queue trigger bad") {
		t.Fatalf("problems %q, want one for trigger bad", p)
	}
}

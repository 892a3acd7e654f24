// Package triggers reads triggers/triggers.yaml: the queues, timers and
// queue triggers of the suite as data. Terraform creates the cloud resources
// from the same file, and the local runner fires the same things from it.
package triggers

import (
	"bytes"
	"fmt"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// File is the parsed triggers.yaml.
type File struct {
	Queues        []Queue        `yaml:"queues"`
	Timers        []Timer        `yaml:"timers"`
	QueueTriggers []QueueTrigger `yaml:"queue_triggers"`
}

// Queue is one message queue.
type Queue struct {
	Name                     string `yaml:"name"`
	VisibilityTimeoutSeconds int    `yaml:"visibility_timeout_seconds"`
	MessageRetentionSeconds  int    `yaml:"message_retention_seconds"`
	MaxReceiveCount          int    `yaml:"max_receive_count"`
	DeadLetterQueue          string `yaml:"dead_letter_queue"`
}

// Timer is one timer trigger.
type Timer struct {
	Name     string `yaml:"name"`
	Function string `yaml:"function"`
	Cron     string `yaml:"cron"`
	Payload  string `yaml:"payload"`
	// LocalPeriod is how often the local runner fires it (Go duration).
	LocalPeriod string `yaml:"local_period"`
}

// QueueTrigger binds a queue to a function.
type QueueTrigger struct {
	Name                     string `yaml:"name"`
	Function                 string `yaml:"function"`
	Queue                    string `yaml:"queue"`
	BatchSize                int    `yaml:"batch_size"`
	BatchCutoffSeconds       int    `yaml:"batch_cutoff_seconds"`
	VisibilityTimeoutSeconds int    `yaml:"visibility_timeout_seconds"`
}

// Load reads and validates the file at path.
func Load(path string) (File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return File{}, err
	}
	return Parse(b)
}

// Parse parses and validates triggers.yaml content (unknown keys are errors).
func Parse(b []byte) (File, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return File{}, fmt.Errorf("triggers.yaml: %w", err)
	}
	return f, f.Validate()
}

// Validate checks references between entries.
func (f File) Validate() error {
	queues := map[string]bool{}
	for _, q := range f.Queues {
		if q.Name == "" || queues[q.Name] {
			return fmt.Errorf("triggers.yaml: queue name %q empty or repeated", q.Name)
		}
		queues[q.Name] = true
	}
	for _, q := range f.Queues {
		if q.DeadLetterQueue != "" && !queues[q.DeadLetterQueue] {
			return fmt.Errorf("triggers.yaml: queue %s: dead_letter_queue %q is not defined", q.Name, q.DeadLetterQueue)
		}
		if q.DeadLetterQueue != "" && q.MaxReceiveCount <= 0 {
			return fmt.Errorf("triggers.yaml: queue %s: max_receive_count must be positive with a dead_letter_queue", q.Name)
		}
	}
	for _, t := range f.Timers {
		if t.Name == "" || t.Function == "" || t.Cron == "" {
			return fmt.Errorf("triggers.yaml: timer %q needs name, function and cron", t.Name)
		}
		if _, err := t.Period(); err != nil {
			return err
		}
	}
	for _, t := range f.QueueTriggers {
		if t.Name == "" || t.Function == "" || !queues[t.Queue] {
			return fmt.Errorf("triggers.yaml: queue trigger %q needs name, function and a defined queue (got %q)", t.Name, t.Queue)
		}
		if t.BatchSize < 1 || t.BatchSize > 10 {
			return fmt.Errorf("triggers.yaml: queue trigger %s: batch_size must be 1..10", t.Name)
		}
	}
	return nil
}

// Period returns the local firing period (default 1 minute, as in the cloud).
func (t Timer) Period() (time.Duration, error) {
	if t.LocalPeriod == "" {
		return time.Minute, nil
	}
	d, err := time.ParseDuration(t.LocalPeriod)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("triggers.yaml: timer %s: local_period %q is not a positive duration", t.Name, t.LocalPeriod)
	}
	return d, nil
}

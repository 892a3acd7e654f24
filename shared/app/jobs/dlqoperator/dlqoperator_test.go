package dlqoperator_test

import (
	"context"
	"testing"

	"ordersaga/shared/app/jobs/dlqoperator"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
)

// fakeDeadLetters decodes {"list"}, {"dry"} (a dry-run redrive), {"purge"}
// and {"fail"}; anything else is malformed.
type fakeDeadLetters struct {
	ingested []int
	executed []redrive.Command
}

func (f *fakeDeadLetters) DecodeCommand(raw []byte) (redrive.Command, error) {
	switch string(raw) {
	case "list":
		return redrive.Command{Action: redrive.ActionList, Actor: "op"}, nil
	case "dry":
		return redrive.Command{Action: redrive.ActionRedrive, DryRun: true}, nil
	case "purge":
		return redrive.Command{Action: redrive.ActionPurge}, nil
	case "fail":
		return redrive.Command{Action: redrive.ActionShow}, nil
	}
	return redrive.Command{}, apperr.New(apperr.Invalid, "malformed")
}

func (f *fakeDeadLetters) IngestBeforeRead(_ context.Context, _ string, max int) (int, error) {
	f.ingested = append(f.ingested, max)
	return 0, nil
}

func (f *fakeDeadLetters) Execute(_ context.Context, cmd redrive.Command) (any, error) {
	f.executed = append(f.executed, cmd)
	if cmd.Action == redrive.ActionShow {
		return nil, apperr.New(apperr.NotFound, "no such entry")
	}
	return "done", nil
}

func TestNewRefusesMissingUseCaseAndNegativeLimit(t *testing.T) {
	if _, err := dlqoperator.New(dlqoperator.Config{}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("no dead letters: err = %v, want Invalid", err)
	}
	if _, err := dlqoperator.New(dlqoperator.Config{DeadLetters: &fakeDeadLetters{}, IngestLimit: -1}); !apperr.Is(err, apperr.Invalid) {
		t.Errorf("negative limit: err = %v, want Invalid", err)
	}
}

func TestRunIngestsBeforeReadsAndCountsEachCommand(t *testing.T) {
	tests := []struct {
		raw      string
		ingested []int
		executed int
		count    string
		wantErr  apperr.Kind
	}{
		{"list", []int{100}, 1, "list/ok", 0},
		{"dry", nil, 1, "redrive/ok", 0},
		{"purge", nil, 1, "purge/ok", 0},
		{"fail", []int{100}, 1, "show/error", apperr.NotFound},
		{"{not a command", nil, 0, "invalid/refused", apperr.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			dl := &fakeDeadLetters{}
			var counts []string
			j, err := dlqoperator.New(dlqoperator.Config{DeadLetters: dl,
				OnAction: func(action, outcome string) { counts = append(counts, action+"/"+outcome) }})
			if err != nil {
				t.Fatal(err)
			}
			res, err := j.Run(context.Background(), []byte(tt.raw))
			if tt.wantErr != 0 {
				if !apperr.Is(err, tt.wantErr) || res != nil {
					t.Errorf("Run = %v, %v; want a %v error", res, err, tt.wantErr)
				}
			} else if err != nil || res != "done" {
				t.Errorf("Run = %v, %v", res, err)
			}
			if len(dl.ingested) != len(tt.ingested) || (len(tt.ingested) > 0 && dl.ingested[0] != tt.ingested[0]) {
				t.Errorf("ingested %v, want %v", dl.ingested, tt.ingested)
			}
			if len(dl.executed) != tt.executed {
				t.Errorf("executed %d commands, want %d", len(dl.executed), tt.executed)
			}
			if len(counts) != 1 || counts[0] != tt.count {
				t.Errorf("counted %v, want [%s]", counts, tt.count)
			}
		})
	}
}

package breakerboard_test

import (
	"testing"
	"time"

	"ordersaga/shared/app/breakerboard"
	"ordersaga/shared/kit/fakeclock"
	"ordersaga/shared/kit/resilience"
)

func TestBoardKeepsEachBreakersLastStateByName(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC))
	b, err := breakerboard.New(breakerboard.Config{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	b.Set("payment", resilience.StateClosed)
	clock.Advance(time.Minute)
	b.Set("catalog", resilience.StateClosed)
	clock.Advance(time.Minute)
	b.Set("payment", resilience.StateOpen)
	got := b.List()
	if len(got) != 2 || got[0].Dependency != "catalog" || got[1].Dependency != "payment" {
		t.Fatalf("List = %+v, want catalog then payment", got)
	}
	if got[1].State != "open" || !got[1].Since.Equal(clock.Now()) {
		t.Errorf("payment = %+v, want open since %v", got[1], clock.Now())
	}
}

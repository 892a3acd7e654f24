package saga

import "time"

// The methods below are the only ways a saga's state changes. Each is one
// write of the saga: it raises Version by one (the stored row's version
// guard expects the old one), so a caller saves the instance with the
// version it read. They check nothing: which one applies is the
// orchestrator's decision (its decide function, recovery, the operator's
// redrive); they keep the fields that belong together consistent.

// Lease gives the saga's lease to owner until until, for an advancer about
// to run its step; a pending saga starts running (at now). A lease alone
// is no step change: UpdatedAt (which the stores' time indexes hold) moves
// only when the state does, as when a lease is released, so the write
// rewrites no index entry.
func (i *Instance) Lease(owner string, until, now time.Time) {
	i.LeaseOwner, i.LeaseUntil = owner, until
	if i.State == StatePending {
		i.State, i.UpdatedAt = StateRunning, now
	}
	i.Version++
}

// ReleaseLease frees the saga's lease (an advancer whose save failed), so
// a redelivered command need not wait for it to lapse.
func (i *Instance) ReleaseLease() {
	i.LeaseOwner, i.LeaseUntil, i.Version = "", time.Time{}, i.Version+1
}

// KeepLease keeps the lease with owner until until in the write that
// records a step's outcome (after Moved, which clears it): the advancer
// runs the next step in place without a lease write of its own.
func (i *Instance) KeepLease(owner string, until time.Time) {
	i.LeaseOwner, i.LeaseUntil = owner, until
}

// Moved starts recording a step's outcome at now: the lease is cleared,
// the saga is due now (a later transition may delay it), recovery's counts
// start again, and lastErr (when not empty) is the step's error. One of
// Advance, Retry, Wait, CompensateFrom or FailAt follows.
func (i *Instance) Moved(lastErr string, now time.Time) {
	i.LeaseOwner, i.LeaseUntil = "", time.Time{}
	i.UpdatedAt, i.NextAttemptAt, i.Version = now, now, i.Version+1
	i.Data.ResetResends()
	if lastErr != "" {
		i.LastError = lastErr
	}
}

// Advance records a forward step that succeeded: the next step, with no
// attempts or waits, or completed after the last of steps.
func (i *Instance) Advance(steps int, now time.Time) {
	i.clearAttempts()
	i.Step++
	if i.Step >= steps {
		i.State, i.Step, i.FinishedAt = StateCompleted, steps, now
		return
	}
	i.State = StateRunning
}

// Retry records a failed attempt to be tried again at at: one attempt more
// of the same step (a forward step keeps the saga running).
func (i *Instance) Retry(dir Direction, at time.Time) {
	i.Attempts++
	if dir == Forward {
		i.State = StateRunning
	}
	i.NextAttemptAt = at
}

// Wait records an attempt that met a dependency that is down, asked again
// at at: the token moves (one attempt more) but the attempt is counted in
// Data.Waits, not against the step's budget. OutageSince is set on the
// first wait of the step.
func (i *Instance) Wait(dir Direction, at, now time.Time) {
	if i.Data.Waits == 0 || i.Data.OutageSince == nil {
		since := now
		i.Data.OutageSince = &since
	}
	i.Attempts, i.Data.Waits = i.Attempts+1, i.Data.Waits+1
	if dir == Forward {
		i.State = StateRunning
	}
	i.NextAttemptAt = at
}

// CompensateFrom records that step j is compensated next, or that the
// saga is compensated when no step is left to compensate (j < 0).
func (i *Instance) CompensateFrom(j int, now time.Time) {
	i.clearAttempts()
	if j < 0 {
		i.State, i.Step, i.FinishedAt = StateCompensated, 0, now
		return
	}
	i.State, i.Step = StateCompensating, j
}

// FailAt ends the saga as failed at step after attempts (a compensation
// that gave up: where an operator's redrive resumes), with lastErr.
func (i *Instance) FailAt(step, attempts int, lastErr string, now time.Time) {
	i.State, i.Step, i.Attempts, i.FinishedAt = StateFailed, step, attempts, now
	i.LastError = lastErr
}

// Redriven records recovery's resend of a stuck saga at now: a lapsed
// lease is abandoned, the saga is due again at next, and ResendVersion
// remembers this write (an advancer that touches the saga moves it on).
func (i *Instance) Resent(next, now time.Time) {
	i.LeaseOwner, i.LeaseUntil = "", time.Time{}
	i.UpdatedAt, i.NextAttemptAt, i.Version = now, next, i.Version+1
	i.Data.ResendVersion = i.Version
}

// Abandon ends a saga that recovery could not make advance: it fails where
// it stands (its step's outcome is unknown, so a redrive compensates from
// that step backwards), with reason as its last error.
func (i *Instance) Abandon(reason string, now time.Time) {
	i.State, i.FinishedAt, i.NextAttemptAt = StateFailed, now, now
	i.LeaseOwner, i.LeaseUntil, i.UpdatedAt, i.Version = "", time.Time{}, now, i.Version+1
	i.LastError = reason
}

// Resume sets a failed saga back to compensating at the step where it
// failed, in a new epoch (so every command written before is stale), due
// now: the operator's dead-letter redrive.
func (i *Instance) Resume(now time.Time) {
	i.State, i.Attempts, i.NextAttemptAt = StateCompensating, 0, now
	i.Data.Epoch, i.Data.Waits = i.Data.Epoch+1, 0
	i.Data.ResetResends()
	i.LeaseOwner, i.LeaseUntil, i.FinishedAt = "", time.Time{}, time.Time{}
	i.UpdatedAt, i.Version = now, i.Version+1
}

// clearAttempts starts a new step or compensation: no attempts, no waits.
func (i *Instance) clearAttempts() {
	i.Attempts, i.Data.Waits, i.Data.OutageSince = 0, 0, nil
}

package ydbstore

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	"github.com/ydb-platform/ydb-go-sdk/v3/query"

	"ordersaga/shared/app/relay"
	"ordersaga/shared/domain/outbox"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/domain/store"
	"ordersaga/shared/domain/store/bucket"
)

// No YDB server runs here. These tests drive the YDB adapter's claim (the
// relay's RunOnce over RunOffline) against modelConn, which answers the
// due list by evaluating the branches of the very query text the adapter
// sends — each condition of each LIMITed branch, its ORDER BY and LIMIT —
// over a modelled outbox table, and counts the index rows each branch
// reads (a key range read in index order until LIMIT rows pass the residual
// lease filter). What YDB itself does with the text is not tested.

// modelRow is one outbox row of the model.
type modelRow struct {
	id, agg, status, dest string
	seq, shard            int64
	bucket                *int64
	head                  *bool
	next, lease           time.Time // zero: NULL
}

// modelConn is an OfflineConn over modelled outbox rows.
type modelConn struct {
	t         *testing.T
	rows      []modelRow
	now       time.Time
	shard     int64
	read      int // index rows the due-list branches read
	branches  int
	execs     []string
	limitSeen int
}

func (c *modelConn) Exec(_ context.Context, yql string, _ ydb.Params, _ bool) error {
	c.execs = append(c.execs, yql)
	return nil
}

func (c *modelConn) QueryRow(context.Context, string, ydb.Params) (query.Row, error) {
	return nil, query.ErrNoRows
}

func (c *modelConn) Commit(context.Context) error { return nil }

func (c *modelConn) Snapshot(ctx context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	return c.Each(ctx, yql, p, fn)
}

func (c *modelConn) Each(_ context.Context, yql string, p ydb.Params, fn func(query.Row) error) error {
	switch yql {
	case qListOutboxDue, qListOutboxDueFrom:
		limit := c.uintParam(p, "$limit")
		c.limitSeen = int(limit)
		for _, m := range reBranch.FindAllStringSubmatch(yql, -1) {
			for _, r := range c.branch(m[3], m[4], int(limit)) {
				if err := fn(r.scan()); err != nil {
					return err
				}
			}
		}
		return nil
	case yqlPendingByAggregate:
		aggs := map[string]bool{}
		for _, a := range c.textList(p, "$aggregate_ids") {
			aggs[a] = true
		}
		for _, r := range c.rows {
			blocks := r.status == string(outbox.StatusPending) ||
				r.status == string(outbox.StatusDead) && r.dest == outbox.DestOrderEvents
			if aggs[r.agg] && blocks {
				if err := fn(r.scan()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	c.t.Fatalf("the model does not answer %.80q", yql)
	return nil
}

// branch evaluates one LIMITed branch: the rows matching every key
// condition in ORDER BY order, the residual lease filter, LIMIT.
func (c *modelConn) branch(where, orderBy string, limit int) []modelRow {
	c.branches++
	key, lease := c.conditions(where)
	var in []modelRow
	for _, r := range c.rows {
		if key(r) {
			in = append(in, r)
		}
	}
	cols := strings.Split(orderBy, ", ")
	slices.SortFunc(in, func(a, b modelRow) int {
		for _, col := range cols {
			if d := a.cmp(b, col); d != 0 {
				return d
			}
		}
		return 0
	})
	var out []modelRow
	for _, r := range in {
		if len(out) == limit {
			break
		}
		c.read++
		if lease(r) {
			out = append(out, r)
		}
	}
	return out
}

// conditions compiles a branch's WHERE: the key conditions, and the
// residual lease filter. Every condition must be one the model knows.
func (c *modelConn) conditions(where string) (key, lease func(modelRow) bool) {
	var keys []func(modelRow) bool
	lease = func(modelRow) bool { return true }
	for _, cond := range reAnd.Split(strings.TrimSpace(where), -1) {
		cond = strings.TrimSpace(cond)
		var f func(modelRow) bool
		switch {
		case strings.HasPrefix(cond, "bucket = "):
			b, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(cond, "bucket = "), "l"), 10, 64)
			if err != nil {
				c.t.Fatalf("bucket condition %q", cond)
			}
			f = func(r modelRow) bool { return r.bucket != nil && *r.bucket == b }
		case cond == "bucket IS NULL":
			f = func(r modelRow) bool { return r.bucket == nil }
		case cond == "status = $pending":
			f = func(r modelRow) bool { return r.status == string(outbox.StatusPending) }
		case cond == "shard = $shard":
			f = func(r modelRow) bool { return r.shard == c.shard }
		case cond == "shard > $shard":
			f = func(r modelRow) bool { return r.shard > c.shard }
		case cond == "head = true":
			f = func(r modelRow) bool { return r.head != nil && *r.head }
		case cond == "head IS NULL":
			f = func(r modelRow) bool { return r.head == nil }
		case cond == "next_attempt_at IS NULL":
			f = func(r modelRow) bool { return r.next.IsZero() }
		case cond == "next_attempt_at <= $now":
			f = func(r modelRow) bool { return !r.next.IsZero() && !r.next.After(c.now) }
		case cond == "(next_attempt_at IS NULL OR next_attempt_at <= $now)":
			f = func(r modelRow) bool { return !r.next.After(c.now) }
		case cond == "(lease_until IS NULL OR lease_until <= $now)":
			lease = func(r modelRow) bool { return !r.lease.After(c.now) }
			continue
		default:
			c.t.Fatalf("the model does not know the condition %q", cond)
		}
		keys = append(keys, f)
	}
	return func(r modelRow) bool {
		for _, f := range keys {
			if !f(r) {
				return false
			}
		}
		return true
	}, lease
}

func (a modelRow) cmp(b modelRow, col string) int {
	switch col {
	case "id":
		return strings.Compare(a.id, b.id)
	case "shard":
		return int(a.shard - b.shard)
	case "head":
		return 0 // fixed by an equality in every branch that sorts by it
	case "next_attempt_at":
		return a.next.Compare(b.next)
	}
	panic("the model cannot sort by " + col)
}

// scan is the row as the adapter scans it.
func (r modelRow) scan() query.Row {
	ts := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	seq := r.seq
	return modelScan{m: map[string]any{"id": r.id, "shard": r.shard, "aggregate_type": "order", "aggregate_id": r.agg,
		"event_type": outbox.TypeOrderCreated, "destination": r.dest, "payload": []byte(`{}`), "metadata": "{}",
		"status": r.status, "attempts": int64(0), "next_attempt_at": ts(r.next), "lease_owner": "",
		"lease_until": ts(r.lease), "last_error": "", "created_at": ts(r.next), "published_at": (*time.Time)(nil),
		"version": int64(1), "aggregate_seq": &seq}}
}

// modelScan is a row; only ScanNamed is used.
type modelScan struct {
	query.Row
	m map[string]any
}

func (s modelScan) ScanNamed(dst ...query.NamedDestination) error {
	for _, d := range dst {
		v, ok := s.m[d.Name()]
		if !ok {
			return fmt.Errorf("model row has no column %s", d.Name())
		}
		reflect.ValueOf(d.Ref()).Elem().Set(reflect.ValueOf(v))
	}
	return nil
}

func (c *modelConn) uintParam(p ydb.Params, name string) uint64 {
	m, err := p.ToYDB()
	if err != nil || m[name] == nil {
		c.t.Fatalf("parameter %s: %v", name, err)
	}
	return m[name].GetValue().GetUint64Value()
}

func (c *modelConn) textList(p ydb.Params, name string) []string {
	m, err := p.ToYDB()
	if err != nil || m[name] == nil {
		c.t.Fatalf("parameter %s: %v", name, err)
	}
	var out []string
	for _, it := range m[name].GetValue().GetItems() {
		out = append(out, it.GetTextValue())
	}
	return out
}

// modelStore is a store.Store whose transactions run the YDB adapter over
// the model (RunOffline).
type modelStore struct{ c *modelConn }

func (s modelStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return RunOffline(ctx, Config{}, s.c, false, fn)
}
func (s modelStore) View(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return RunOffline(ctx, Config{}, s.c, true, fn)
}
func (modelStore) Close() error { return nil }

// acceptAll is a queue that accepts every message.
type acceptAll struct{ queue.Queue }

func (acceptAll) SendBatch(_ context.Context, _ string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	out := make([]queue.SendResult, len(msgs))
	for i, m := range msgs {
		out[i] = queue.SendResult{ID: m.ID, MessageID: "m-" + m.ID}
	}
	return out, nil
}

// blockedModel is 10 000 orders whose first event is held back (dead,
// backing off, or redriven and due), each with a later event behind it
// that is older than every row that may go; 150 free orders; and 300
// orders written before migration 0015 (NULL bucket and head) whose first
// event is dead.
func blockedModel(t *testing.T, t0 time.Time) (*modelConn, map[string]bool) {
	yes, no := true, false
	claimable := map[string]bool{}
	c := &modelConn{t: t, now: t0.Add(3 * time.Second)}
	add := func(id, agg, status string, seq int64, head *bool, next time.Time, bucketed bool) {
		r := modelRow{id: id, agg: agg, status: status, dest: outbox.DestOrderEvents, seq: seq, head: head, next: next}
		if bucketed {
			b := bucket.Of(id)
			r.bucket = &b
		}
		c.rows = append(c.rows, r)
	}
	pending, dead := string(outbox.StatusPending), string(outbox.StatusDead)
	for i := range 10000 {
		agg := fmt.Sprintf("order-%05d", i)
		first, later := fmt.Sprintf("a-%05d", i), fmt.Sprintf("b-%05d", i)
		switch i % 3 {
		case 0:
			add(first, agg, dead, 1, &yes, t0, true)
		case 1:
			add(first, agg, pending, 1, &yes, t0.Add(time.Hour), true)
		case 2:
			add(first, agg, pending, 1, &yes, t0.Add(time.Second), true)
			claimable[first] = true
		}
		add(later, agg, pending, 2, &no, t0, true)
	}
	for i := range 300 {
		agg := fmt.Sprintf("legacy-%05d", i)
		add(fmt.Sprintf("legacy-a-%05d", i), agg, dead, 1, nil, t0, false)
		add(fmt.Sprintf("legacy-b-%05d", i), agg, pending, 2, nil, t0.Add(-time.Second), false)
	}
	for i := range 150 {
		id := fmt.Sprintf("free-%05d", i)
		add(id, "free-"+id, pending, 1, &yes, t0.Add(2*time.Second), true)
		claimable[id] = true
	}
	return c, claimable
}

// sentTo is acceptAll recording the ids of the messages it accepted.
type sentTo struct {
	acceptAll
	ids *[]string
}

func (s sentTo) SendBatch(ctx context.Context, url string, msgs []queue.OutMessage) ([]queue.SendResult, error) {
	for _, m := range msgs {
		*s.ids = append(*s.ids, m.ID)
	}
	return s.acceptAll.SendBatch(ctx, url, msgs)
}

// The YDB adapter's claim, driven by the relay, with 10 000 orders held
// back: the due list's branches read only heads (and the NULL prefix of
// rows written before heads), each branch at most LIMIT rows, and the
// round claims a full batch of rows that may go.
func TestYDBClaimPassesTenThousandBlockedAggregates(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c, claimable := blockedModel(t, t0)
	var sent []string
	r, err := relay.New(relay.Config{Store: modelStore{c}, Queue: sentTo{ids: &sent}, Shards: 1, BatchSize: 100,
		Log:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		URLs: map[string]string{outbox.DestOrderEvents: "events"}, Now: func() time.Time { return c.now }})
	if err != nil {
		t.Fatal(err)
	}
	var rep relay.Report
	n, err := r.RunOnce(context.Background(), &rep)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("one claim round: %d claimed, %d index rows read by %d branches (last LIMIT %d), report %+v",
		n, c.read, c.branches, c.limitSeen, rep)
	if n != 100 || len(sent) != 100 {
		t.Fatalf("claimed %d, sent %d; want a full batch of 100", n, len(sent))
	}
	for _, id := range sent {
		if !claimable[id] {
			t.Errorf("sent %s, which waits behind its order's first event", id)
		}
	}
	// Branches: 9 buckets x 3 (NULL next, due, shards above) per list; the
	// 300 rows of the NULL prefix fill its LIMIT and are demoted.
	if max := c.branches * c.limitSeen; c.read > max {
		t.Errorf("the branches read %d index rows, more than branches x LIMIT = %d", c.read, max)
	}
	demoted := 0
	for _, yql := range c.execs {
		demoted += strings.Count(yql, "UPDATE outbox ON\nSELECT id, bucket, head FROM")
	}
	if demoted == 0 {
		t.Errorf("the rows of the NULL prefix behind a dead row were not demoted (sent %d statements)", len(c.execs))
	}
}

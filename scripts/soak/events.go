package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	_ "modernc.org/sqlite" // the driver of the runner's data file
)

// published is one message on order-events, in the order the queue stored
// them (what a consumer reading the queue in order would see).
type published struct {
	Seq       int64
	EventID   string
	EventType string
	OrderID   string
	Key       string
}

// readOrderEvents reads every message of order-events from the stopped
// runner's data file (nothing consumes that queue locally, so every message
// published is still there).
func readOrderEvents(ctx context.Context, path string) ([]published, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT seq, COALESCE(attributes, '') FROM queue_messages WHERE queue = 'order-events' ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("read order-events from %s: %w", path, err)
	}
	defer rows.Close()
	var out []published
	for rows.Next() {
		var seq int64
		var attrs string
		if err := rows.Scan(&seq, &attrs); err != nil {
			return nil, err
		}
		var a map[string]string
		if attrs != "" {
			if err := json.Unmarshal([]byte(attrs), &a); err != nil {
				return nil, fmt.Errorf("order-events message %d: attributes: %w", seq, err)
			}
		}
		out = append(out, published{Seq: seq, EventID: a["event_id"], EventType: a["event_type"],
			OrderID: a["aggregate_id"], Key: a["idempotency_key"]})
	}
	return out, rows.Err()
}

// outboxLeft counts the order-events rows of the data file's outbox that
// were never published, by status (pending, dead).
func outboxLeft(ctx context.Context, path string) (map[string]int, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT status, COUNT(*) FROM outbox WHERE destination = 'order-events' AND status IN ('pending', 'dead') GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count outbox rows in %s: %w", path, err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, err
		}
		out[st] = n
	}
	return out, rows.Err()
}

// Package sqlitequeue is the embedded queue adapter of the queue port: SQS
// standard-queue semantics (visibility timeout, receive count, redrive to a
// dead-letter queue, long polling) kept in a SQLite database file, for local
// runs and tests.
//
// It can share the database file (and even the *sql.DB) with other packages:
// its tables are prefixed queue_ (queue_queues, queue_messages) and it
// assumes no exclusive access. Every state change runs in a BEGIN IMMEDIATE
// transaction on a dedicated connection, so two receivers never get the same
// message within its visibility window, even across processes. Long polls
// are woken at once by sends through the same *Queue and otherwise poll
// every PollInterval, so sends from another process are seen too.
//
// Queue URLs have the form sqlitequeue:///<name>.
package sqlitequeue

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/validate"
)

// URLPrefix starts every queue URL of this adapter.
const URLPrefix = "sqlitequeue:///"

// DefaultPollInterval is how often a long poll re-checks the database when
// nothing wakes it earlier.
const DefaultPollInterval = 50 * time.Millisecond

// DefaultBusyTimeout is the SQLite busy_timeout Open sets.
const DefaultBusyTimeout = 10 * time.Second

// Queue is a queue.Queue over a SQLite database. Safe for concurrent use.
type Queue struct {
	db     *sql.DB
	ownsDB bool
	now    func() time.Time
	newID  func() string
	poll   time.Duration

	mu      sync.Mutex
	wakeups map[string]chan struct{} // queue name -> closed on the next change
	known   sync.Map                 // queue name -> true: found by a send (see exists)
}

var _ queue.Queue = (*Queue)(nil)

// Config configures a Queue (Open, New). Zero fields take the defaults
// named; negative ones are refused. The zero value is usable.
type Config struct {
	// Now is the clock used for visibility, delays and timestamps (default
	// time.Now). Long polls still wait in real time.
	Now func() time.Time
	// NewID generates message ids and receipt handles (default random
	// UUIDs). It must return unique strings.
	NewID func() string
	// PollInterval is how often a long poll re-checks the database (default
	// DefaultPollInterval).
	PollInterval time.Duration
	// BusyTimeout is the SQLite busy_timeout of the connections Open makes
	// (default DefaultBusyTimeout). New ignores it: the caller's DSN decides.
	BusyTimeout time.Duration
}

// Validate reports what Open and New would refuse: a negative
// PollInterval or BusyTimeout. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	validate.NotNegative(&p, "PollInterval", c.PollInterval)
	validate.NotNegative(&p, "BusyTimeout", c.BusyTimeout)
	return p.Err("sqlitequeue")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.NewID == nil {
		c.NewID = uuid.NewString
	}
	c.PollInterval = cmp.Or(c.PollInterval, DefaultPollInterval)
	c.BusyTimeout = cmp.Or(c.BusyTimeout, DefaultBusyTimeout)
}

// Open opens (creating if needed) the SQLite database file at path in WAL
// mode with a busy timeout, creates the queue tables and returns a Queue that
// owns the database: Close closes it. cfg's zero fields take their
// defaults. Errors: Invalid for a bad path or a negative setting (naming the
// field).
func Open(path string, cfg Config) (*Queue, error) {
	// An in-memory database would be a different one on each pooled
	// connection; a '?' or '#' would break the DSN.
	if path == "" || strings.Contains(path, ":memory:") || strings.ContainsAny(path, "?#") {
		return nil, apperr.New(apperr.Invalid, "sqlitequeue: bad database path %q (want a file path)", path)
	}
	c, err := configure(cfg)
	if err != nil {
		return nil, err
	}
	dsn := fmt.Sprintf("file:%s?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)",
		path, c.BusyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, apperr.Wrap(apperr.Internal, err, "sqlitequeue: open %s", path)
	}
	q, err := newQueue(db, true, c)
	if err != nil {
		db.Close()
		return nil, err
	}
	return q, nil
}

// New returns a Queue over an existing database handle (for example the one
// the SQLite store uses) and creates the queue tables if missing. The handle
// should have a busy_timeout (and preferably WAL) configured; Close does not
// close it. cfg and errors as for Open (cfg.BusyTimeout is not used).
func New(db *sql.DB, cfg Config) (*Queue, error) {
	if db == nil {
		return nil, apperr.New(apperr.Invalid, "sqlitequeue: nil *sql.DB")
	}
	c, err := configure(cfg)
	if err != nil {
		return nil, err
	}
	return newQueue(db, false, c)
}

// configure validates c and sets its defaults.
func configure(c Config) (Config, error) {
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	c.setDefaults()
	return c, nil
}

func newQueue(db *sql.DB, owns bool, c Config) (*Queue, error) {
	q := &Queue{db: db, ownsDB: owns, now: c.Now, newID: c.NewID, poll: c.PollInterval, wakeups: map[string]chan struct{}{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := q.immediate(ctx, func(ctx context.Context, conn *sql.Conn) error {
		for _, stmt := range schema {
			if _, err := conn.ExecContext(ctx, stmt); err != nil {
				return classify(err, "sqlitequeue: create tables")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// Close closes the database if Open opened it; otherwise it does nothing.
func (q *Queue) Close() error {
	if !q.ownsDB {
		return nil
	}
	return q.db.Close()
}

// schema creates the adapter's tables. Times are Unix milliseconds.
// A message is visible when visible_at_ms <= now; in flight when it has a
// receipt handle (it was received) and is not visible; delayed otherwise.
var schema = []string{
	`CREATE TABLE IF NOT EXISTS queue_queues (
		name                  TEXT PRIMARY KEY,
		visibility_timeout_ms INTEGER NOT NULL,
		max_receive_count     INTEGER NOT NULL DEFAULT 0,
		dead_letter_queue     TEXT NOT NULL DEFAULT '',
		created_at_ms         INTEGER NOT NULL
	)`,
	`CREATE TABLE IF NOT EXISTS queue_messages (
		seq            INTEGER PRIMARY KEY AUTOINCREMENT,
		queue          TEXT NOT NULL,
		message_id     TEXT NOT NULL,
		body           TEXT NOT NULL,
		attributes     TEXT,
		sent_at_ms     INTEGER NOT NULL,
		visible_at_ms  INTEGER NOT NULL,
		receive_count  INTEGER NOT NULL DEFAULT 0,
		receipt_handle TEXT
	)`,
	`CREATE INDEX IF NOT EXISTS queue_messages_visible ON queue_messages (queue, visible_at_ms, seq)`,
	// Only received messages have a handle: a partial index, so a send
	// writes no entry (files made before keep the full index too, which
	// DROP removes).
	`CREATE UNIQUE INDEX IF NOT EXISTS queue_messages_receipt ON queue_messages (receipt_handle) WHERE receipt_handle IS NOT NULL`,
	`DROP INDEX IF EXISTS queue_messages_handle`,
}

// URL returns the queue URL of the queue called name.
func URL(name string) string { return URLPrefix + name }

// nameOf parses a queue URL of this adapter. Errors are Invalid.
func nameOf(queueURL string) (string, error) {
	name, ok := strings.CutPrefix(queueURL, URLPrefix)
	if !ok || queue.CheckSpec(queue.QueueSpec{Name: name}) != nil {
		return "", apperr.New(apperr.Invalid, "sqlitequeue: bad queue URL %q (want %s<name>)", queueURL, URLPrefix)
	}
	return name, nil
}

// ms converts a time to the stored Unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// visibleAfter is the instant, in milliseconds, at which something hidden
// at now for d becomes visible. d <= 0: now (visible at once). Otherwise
// rounded up: a receive compares ms(now), which rounds down, so rounding
// down here would show a delayed or in-flight message up to 1 ms early.
func visibleAfter(now time.Time, d time.Duration) int64 {
	if d <= 0 {
		return ms(now)
	}
	t := now.Add(d)
	m := t.UnixMilli()
	if t.After(time.UnixMilli(m)) {
		m++
	}
	return m
}

// Package config turns the environment into one validated Config, read once
// per function instance (cold start). Adapters never read the environment;
// a misconfiguration fails the cold start with a message naming the variable.
package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Store backends.
const (
	StoreSQLite = "sqlite"
	StoreYDB    = "ydb"
)

// Queue backends.
const (
	QueueSQLite = "sqlite"
	QueueYMQ    = "ymq"
)

// Auth modes.
const (
	AuthGateway = "gateway"
	AuthTokens  = "tokens"
)

// Config is the whole configuration of one process or function instance.
type Config struct {
	Store      string // ORDERSAGA_STORE: sqlite | ydb
	SQLitePath string // ORDERSAGA_SQLITE_PATH
	YDB        YDB

	Queue       string // ORDERSAGA_QUEUE: sqlite | ymq
	YMQ         YMQ
	QueueURLs   QueueURLs
	QueueSQLite string // ORDERSAGA_QUEUE_SQLITE_PATH (defaults to SQLitePath)

	Auth       string // ORDERSAGA_AUTH: gateway | tokens
	AuthTokens string // ORDERSAGA_AUTH_TOKENS: token=subject:role,...

	Relay    RelaySettings
	Saga     SagaSettings
	Recovery RecoverySettings
	Redrive  RedriveSettings

	Payment PaymentSettings

	Function   string // ORDERSAGA_FUNCTION: this function\'s name (metrics label)
	LogLevel   string // ORDERSAGA_LOG_LEVEL: debug | info | warn | error
	Metrics    string // ORDERSAGA_METRICS: none | prometheus | monitoring
	Monitoring Monitoring
}

// YDB connection settings.
type YDB struct {
	ConnectionString string // YDB_CONNECTION_STRING
	Auth             string // YDB_AUTH: metadata | token | anonymous
	Token            string // YDB_TOKEN (with YDB_AUTH=token)
}

// YMQ connection settings (static keys come from Lockbox in the cloud).
type YMQ struct {
	Endpoint        string // YMQ_ENDPOINT
	Region          string // YMQ_REGION
	AccessKeyID     string // YMQ_ACCESS_KEY_ID
	SecretAccessKey string // YMQ_SECRET_ACCESS_KEY
}

// QueueURLs names the queues (URLs as returned by YMQ; local: sqlitequeue URLs).
type QueueURLs struct {
	SagaCommands    string // SAGA_COMMANDS_QUEUE_URL
	SagaCommandsDLQ string // SAGA_COMMANDS_DLQ_URL
	OrderEvents     string // ORDER_EVENTS_QUEUE_URL
}

// RelaySettings are the relay settings.
type RelaySettings struct {
	BatchSize   int           // RELAY_BATCH_SIZE (rows per claim)
	MaxAttempts int           // RELAY_MAX_ATTEMPTS (then the row is dead)
	Lease       time.Duration // RELAY_LEASE
	BackoffBase time.Duration // RELAY_BACKOFF_BASE
	BackoffCap  time.Duration // RELAY_BACKOFF_CAP
	Shards      int           // OUTBOX_SHARDS
	Budget      time.Duration // RELAY_BUDGET: how long one invocation keeps relaying
	Retention   time.Duration // OUTBOX_RETENTION: published rows kept this long

	// SendConcurrency is RELAY_SEND_CONCURRENCY: the queue calls of one
	// relay round in flight at once.
	SendConcurrency int
}

// SagaSettings are the saga settings.
type SagaSettings struct {
	Lease       time.Duration // SAGA_LEASE
	BackoffBase time.Duration // SAGA_BACKOFF_BASE
	BackoffCap  time.Duration // SAGA_BACKOFF_CAP
	InboxTTL    time.Duration // INBOX_TTL
	// OutageBound is how long a step whose participant seems down waits
	// for it, from its first wait, before failures spend (or end) its
	// attempts again (SAGA_OUTAGE_BOUND).
	OutageBound time.Duration
	// BatchConcurrency bounds the sagas of one delivered batch advanced at
	// once (SAGA_BATCH_CONCURRENCY).
	BatchConcurrency int
}

// RecoverySettings are the recovery job's settings.
type RecoverySettings struct {
	BatchSize  int           // RECOVERY_BATCH_SIZE
	StuckAfter time.Duration // RECOVERY_STUCK_AFTER
	// MaxResends: resends of a saga that does not move before recovery
	// fails it with a dead letter (RECOVERY_MAX_RESENDS).
	MaxResends int
	// MaxWait: how long a saga's command may stay unconsumed (through
	// resends not consumed either) before recovery fails the saga with a
	// dead letter; keep it at the saga commands queue's message retention
	// (RECOVERY_MAX_WAIT).
	MaxWait time.Duration
}

// RedriveSettings are the operator's dead-letter redrive settings.
type RedriveSettings struct {
	MaxPerCall int // REDRIVE_MAX (upper bound of "max")
	LoopLimit  int // REDRIVE_LOOP_LIMIT: redrives before an entry is flagged
	MaxRate    int // REDRIVE_MAX_RATE (upper bound of rate_per_sec)
}

// PaymentSettings are the payment provider settings.
type PaymentSettings struct {
	ProviderURL      string        // PAYMENT_PROVIDER_URL ("" = the built-in simulated provider)
	Timeout          time.Duration // PAYMENT_TIMEOUT (per attempt)
	MaxConcurrent    int           // PAYMENT_MAX_CONCURRENT (bulkhead)
	BreakerThreshold int           // PAYMENT_BREAKER_THRESHOLD
	BreakerOpenFor   time.Duration // PAYMENT_BREAKER_OPEN_FOR
	DeclineAbove     int64         // PAYMENT_DECLINE_ABOVE_MINOR (simulated provider)
	FailureRate      float64       // PAYMENT_FAILURE_RATE (simulated provider, 0..1)
	Latency          time.Duration // PAYMENT_LATENCY (simulated provider)
}

// Monitoring settings for Yandex Monitoring custom metrics.
type Monitoring struct {
	FolderID string // MONITORING_FOLDER_ID
	Endpoint string // MONITORING_ENDPOINT
}

// Defaults of the saga advancer and recovery (SAGA_LEASE, SAGA_BACKOFF_BASE,
// SAGA_BACKOFF_CAP, SAGA_OUTAGE_BOUND, INBOX_TTL, RECOVERY_BATCH_SIZE, RECOVERY_STUCK_AFTER,
// RECOVERY_MAX_RESENDS, RECOVERY_MAX_WAIT). Default uses them, and package orchestrator's
// defaults (orchestrator.DefaultLease, ...) are these constants, so the
// configuration and a component built without it never disagree.
const (
	DefaultSagaLease          = 30 * time.Second
	DefaultSagaBackoffBase    = 500 * time.Millisecond
	DefaultSagaBackoffCap     = time.Minute
	DefaultSagaOutageBound    = 20 * time.Minute
	DefaultInboxTTL           = 7 * 24 * time.Hour
	DefaultRecoveryBatchSize  = 100
	DefaultRecoveryStuckAfter = 30 * time.Second
	DefaultRecoveryMaxResends = 20
	DefaultRecoveryMaxWait    = 96 * time.Hour // the saga commands queue's message_retention_seconds
)

// Default returns the local-development configuration.
func Default() Config {
	return Config{
		Store: StoreSQLite, SQLitePath: "ordersaga.db",
		YDB:   YDB{Auth: "metadata"},
		Queue: QueueSQLite,
		YMQ:   YMQ{Endpoint: "https://message-queue.api.cloud.yandex.net", Region: "ru-central1"},
		QueueURLs: QueueURLs{
			SagaCommands:    "sqlitequeue:///saga-commands",
			SagaCommandsDLQ: "sqlitequeue:///saga-commands-dlq",
			OrderEvents:     "sqlitequeue:///order-events",
		},
		Auth: AuthTokens, AuthTokens: "dev-user=dev-user:user,dev-admin=dev-admin:admin",
		Relay: RelaySettings{BatchSize: DefaultRelayBatchSize, MaxAttempts: DefaultRelayMaxAttempts, Lease: DefaultRelayLease,
			BackoffBase: DefaultRelayBackoffBase, BackoffCap: DefaultRelayBackoffCap, Shards: DefaultShards,
			Budget: DefaultRelayBudget, Retention: DefaultOutboxRetention, SendConcurrency: DefaultRelaySendConcurrency},
		Saga:     SagaSettings{Lease: DefaultSagaLease, BackoffBase: DefaultSagaBackoffBase, BackoffCap: DefaultSagaBackoffCap, OutageBound: DefaultSagaOutageBound, InboxTTL: DefaultInboxTTL, BatchConcurrency: DefaultSagaBatchConcurrency},
		Recovery: RecoverySettings{BatchSize: DefaultRecoveryBatchSize, StuckAfter: DefaultRecoveryStuckAfter, MaxResends: DefaultRecoveryMaxResends, MaxWait: DefaultRecoveryMaxWait},
		Redrive:  RedriveSettings{MaxPerCall: DefaultRedriveMaxPerCall, LoopLimit: DefaultRedriveLoopLimit, MaxRate: DefaultRedriveMaxRate},
		Payment: PaymentSettings{Timeout: DefaultPaymentTimeout, MaxConcurrent: DefaultPaymentMaxConcurrent,
			BreakerThreshold: DefaultPaymentBreakerThreshold, BreakerOpenFor: DefaultPaymentBreakerOpenFor, DeclineAbove: 1_000_000},
		Function: "local", LogLevel: "info", Metrics: "none",
		Monitoring: Monitoring{Endpoint: "https://monitoring.api.cloud.yandex.net/monitoring/v2/data/write"},
	}
}

// Getenv is os.Getenv or a test double.
type Getenv func(string) string

// Load reads the environment over Default and validates the result.
func Load(getenv Getenv) (Config, error) {
	c := Default()
	r := reader{get: getenv}
	r.str("ORDERSAGA_STORE", &c.Store)
	r.str("ORDERSAGA_SQLITE_PATH", &c.SQLitePath)
	r.str("YDB_CONNECTION_STRING", &c.YDB.ConnectionString)
	r.str("YDB_AUTH", &c.YDB.Auth)
	r.str("YDB_TOKEN", &c.YDB.Token)
	r.str("ORDERSAGA_QUEUE", &c.Queue)
	r.str("ORDERSAGA_QUEUE_SQLITE_PATH", &c.QueueSQLite)
	r.str("YMQ_ENDPOINT", &c.YMQ.Endpoint)
	r.str("YMQ_REGION", &c.YMQ.Region)
	r.str("YMQ_ACCESS_KEY_ID", &c.YMQ.AccessKeyID)
	r.str("YMQ_SECRET_ACCESS_KEY", &c.YMQ.SecretAccessKey)
	r.str("SAGA_COMMANDS_QUEUE_URL", &c.QueueURLs.SagaCommands)
	r.str("SAGA_COMMANDS_DLQ_URL", &c.QueueURLs.SagaCommandsDLQ)
	r.str("ORDER_EVENTS_QUEUE_URL", &c.QueueURLs.OrderEvents)
	r.str("ORDERSAGA_AUTH", &c.Auth)
	r.str("ORDERSAGA_AUTH_TOKENS", &c.AuthTokens)
	r.int("RELAY_BATCH_SIZE", &c.Relay.BatchSize)
	r.int("RELAY_SEND_CONCURRENCY", &c.Relay.SendConcurrency)
	r.int("RELAY_MAX_ATTEMPTS", &c.Relay.MaxAttempts)
	r.dur("RELAY_LEASE", &c.Relay.Lease)
	r.dur("RELAY_BACKOFF_BASE", &c.Relay.BackoffBase)
	r.dur("RELAY_BACKOFF_CAP", &c.Relay.BackoffCap)
	r.int("OUTBOX_SHARDS", &c.Relay.Shards)
	r.dur("RELAY_BUDGET", &c.Relay.Budget)
	r.dur("OUTBOX_RETENTION", &c.Relay.Retention)
	r.dur("SAGA_LEASE", &c.Saga.Lease)
	r.dur("SAGA_BACKOFF_BASE", &c.Saga.BackoffBase)
	r.dur("SAGA_BACKOFF_CAP", &c.Saga.BackoffCap)
	r.dur("SAGA_OUTAGE_BOUND", &c.Saga.OutageBound)
	r.dur("INBOX_TTL", &c.Saga.InboxTTL)
	r.int("SAGA_BATCH_CONCURRENCY", &c.Saga.BatchConcurrency)
	r.int("RECOVERY_BATCH_SIZE", &c.Recovery.BatchSize)
	r.dur("RECOVERY_STUCK_AFTER", &c.Recovery.StuckAfter)
	r.int("RECOVERY_MAX_RESENDS", &c.Recovery.MaxResends)
	r.dur("RECOVERY_MAX_WAIT", &c.Recovery.MaxWait)
	r.int("REDRIVE_MAX", &c.Redrive.MaxPerCall)
	r.int("REDRIVE_LOOP_LIMIT", &c.Redrive.LoopLimit)
	r.int("REDRIVE_MAX_RATE", &c.Redrive.MaxRate)
	r.str("PAYMENT_PROVIDER_URL", &c.Payment.ProviderURL)
	r.dur("PAYMENT_TIMEOUT", &c.Payment.Timeout)
	r.int("PAYMENT_MAX_CONCURRENT", &c.Payment.MaxConcurrent)
	r.int("PAYMENT_BREAKER_THRESHOLD", &c.Payment.BreakerThreshold)
	r.dur("PAYMENT_BREAKER_OPEN_FOR", &c.Payment.BreakerOpenFor)
	r.int64("PAYMENT_DECLINE_ABOVE_MINOR", &c.Payment.DeclineAbove)
	r.float("PAYMENT_FAILURE_RATE", &c.Payment.FailureRate)
	r.dur("PAYMENT_LATENCY", &c.Payment.Latency)
	r.str("ORDERSAGA_FUNCTION", &c.Function)
	r.str("ORDERSAGA_LOG_LEVEL", &c.LogLevel)
	r.str("ORDERSAGA_METRICS", &c.Metrics)
	r.str("MONITORING_FOLDER_ID", &c.Monitoring.FolderID)
	r.str("MONITORING_ENDPOINT", &c.Monitoring.Endpoint)
	if c.QueueSQLite == "" {
		c.QueueSQLite = c.SQLitePath
	}
	if err := errors.Join(append(r.errs, c.Validate())...); err != nil {
		return Config{}, fmt.Errorf("invalid configuration: %w", err)
	}
	return c, nil
}

// Validate reports every inconsistency at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	c.validateBackends(bad)
	c.validateLimits(bad)
	c.validateObservability(bad)
	return errors.Join(errs...)
}

// complaint records one problem of a configuration.
type complaint func(format string, args ...any)

// validateBackends checks the store, the queue and the authentication.
func (c Config) validateBackends(bad complaint) {
	switch c.Store {
	case StoreSQLite:
		if c.SQLitePath == "" {
			bad("ORDERSAGA_SQLITE_PATH is required with ORDERSAGA_STORE=sqlite")
		}
	case StoreYDB:
		if c.YDB.ConnectionString == "" {
			bad("YDB_CONNECTION_STRING is required with ORDERSAGA_STORE=ydb")
		}
		switch c.YDB.Auth {
		case "metadata", "anonymous":
		case "token":
			if c.YDB.Token == "" {
				bad("YDB_TOKEN is required with YDB_AUTH=token")
			}
		default:
			bad("YDB_AUTH must be metadata, token or anonymous (got %q)", c.YDB.Auth)
		}
	default:
		bad("ORDERSAGA_STORE must be sqlite or ydb (got %q)", c.Store)
	}
	switch c.Queue {
	case QueueSQLite:
		if c.Store != StoreSQLite {
			bad("ORDERSAGA_QUEUE=sqlite needs ORDERSAGA_STORE=sqlite (the embedded queue lives in the local database file)")
		}
	case QueueYMQ:
		if c.YMQ.Endpoint == "" || c.YMQ.Region == "" {
			bad("YMQ_ENDPOINT and YMQ_REGION are required with ORDERSAGA_QUEUE=ymq")
		}
		if c.YMQ.AccessKeyID == "" || c.YMQ.SecretAccessKey == "" {
			bad("YMQ_ACCESS_KEY_ID and YMQ_SECRET_ACCESS_KEY are required with ORDERSAGA_QUEUE=ymq (from Lockbox in the cloud)")
		}
	default:
		bad("ORDERSAGA_QUEUE must be sqlite or ymq (got %q)", c.Queue)
	}
	if c.QueueURLs.SagaCommands == "" || c.QueueURLs.OrderEvents == "" {
		bad("SAGA_COMMANDS_QUEUE_URL and ORDER_EVENTS_QUEUE_URL are required")
	}
	switch c.Auth {
	case AuthGateway:
	case AuthTokens:
		if c.AuthTokens == "" {
			bad("ORDERSAGA_AUTH_TOKENS is required with ORDERSAGA_AUTH=tokens")
		}
	default:
		bad("ORDERSAGA_AUTH must be gateway or tokens (got %q)", c.Auth)
	}
}

// validateLimits checks the sizes, counts, leases and backoffs.
func (c Config) validateLimits(bad complaint) {
	positive := func(name string, v int) {
		if v <= 0 {
			bad("%s must be positive (got %d)", name, v)
		}
	}
	positive("RELAY_BATCH_SIZE", c.Relay.BatchSize)
	positive("SAGA_BATCH_CONCURRENCY", c.Saga.BatchConcurrency)
	positive("RELAY_SEND_CONCURRENCY", c.Relay.SendConcurrency)
	positive("RELAY_MAX_ATTEMPTS", c.Relay.MaxAttempts)
	positive("OUTBOX_SHARDS", c.Relay.Shards)
	positive("RECOVERY_BATCH_SIZE", c.Recovery.BatchSize)
	positive("RECOVERY_MAX_RESENDS", c.Recovery.MaxResends)
	positive("REDRIVE_MAX", c.Redrive.MaxPerCall)
	positive("REDRIVE_LOOP_LIMIT", c.Redrive.LoopLimit)
	positive("REDRIVE_MAX_RATE", c.Redrive.MaxRate)
	positive("PAYMENT_MAX_CONCURRENT", c.Payment.MaxConcurrent)
	positive("PAYMENT_BREAKER_THRESHOLD", c.Payment.BreakerThreshold)
	if c.Relay.BatchSize > 1000 {
		bad("RELAY_BATCH_SIZE must be at most 1000 (got %d)", c.Relay.BatchSize)
	}
	if c.Relay.SendConcurrency > MaxRelaySendConcurrency {
		bad("RELAY_SEND_CONCURRENCY must be at most %d (got %d)", MaxRelaySendConcurrency, c.Relay.SendConcurrency)
	}
	if c.Relay.BackoffBase <= 0 || c.Relay.BackoffCap < c.Relay.BackoffBase {
		bad("RELAY_BACKOFF_BASE must be positive and RELAY_BACKOFF_CAP at least as large")
	}
	if c.Saga.BackoffBase <= 0 || c.Saga.BackoffCap < c.Saga.BackoffBase {
		bad("SAGA_BACKOFF_BASE must be positive and SAGA_BACKOFF_CAP at least as large")
	}
	if c.Saga.OutageBound <= 0 {
		bad("SAGA_OUTAGE_BOUND must be positive (got %s)", c.Saga.OutageBound)
	}
	if c.Recovery.MaxWait <= 0 {
		bad("RECOVERY_MAX_WAIT must be positive")
	}
	if c.Relay.Lease <= 0 || c.Saga.Lease <= 0 {
		bad("RELAY_LEASE and SAGA_LEASE must be positive")
	}
	// That SAGA_LEASE exceeds the longest step timeout is checked where the
	// step table is: app.New (orchestrator.CheckLease).
	if c.Payment.FailureRate < 0 || c.Payment.FailureRate > 1 {
		bad("PAYMENT_FAILURE_RATE must be between 0 and 1 (got %v)", c.Payment.FailureRate)
	}
	if c.Payment.DeclineAbove < 0 {
		bad("PAYMENT_DECLINE_ABOVE_MINOR must not be negative (got %d)", c.Payment.DeclineAbove)
	}
	if c.Payment.Latency < 0 {
		bad("PAYMENT_LATENCY must not be negative (got %v)", c.Payment.Latency)
	}
}

// validateObservability checks the log level and the metrics backend.
func (c Config) validateObservability(bad complaint) {
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		bad("ORDERSAGA_LOG_LEVEL must be debug, info, warn or error (got %q)", c.LogLevel)
	}
	switch c.Metrics {
	case "none", "prometheus":
	case "monitoring":
		if c.Monitoring.FolderID == "" {
			bad("MONITORING_FOLDER_ID is required with ORDERSAGA_METRICS=monitoring")
		}
	default:
		bad("ORDERSAGA_METRICS must be none, prometheus or monitoring (got %q)", c.Metrics)
	}
}

type reader struct {
	get  Getenv
	errs []error
}

func (r *reader) str(name string, dst *string) {
	if v := strings.TrimSpace(r.get(name)); v != "" {
		*dst = v
	}
}

func (r *reader) int(name string, dst *int) {
	read(r, name, dst, "an integer", strconv.Atoi)
}

func (r *reader) int64(name string, dst *int64) {
	read(r, name, dst, "an integer", func(v string) (int64, error) { return strconv.ParseInt(v, 10, 64) })
}

func (r *reader) float(name string, dst *float64) {
	read(r, name, dst, "a number", func(v string) (float64, error) { return strconv.ParseFloat(v, 64) })
}

func (r *reader) dur(name string, dst *time.Duration) {
	read(r, name, dst, "a Go duration such as 30s or 5m", func(v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = fmt.Errorf("negative duration")
		}
		return d, err
	})
}

// read parses variable name with parse into dst when it is set, and records
// a message naming the variable and the expected form when it is malformed.
func read[T any](r *reader, name string, dst *T, want string, parse func(string) (T, error)) {
	v := strings.TrimSpace(r.get(name))
	if v == "" {
		return
	}
	x, err := parse(v)
	if err != nil {
		r.errs = append(r.errs, fmt.Errorf("%s must be %s (got %q)", name, want, v))
		return
	}
	*dst = x
}

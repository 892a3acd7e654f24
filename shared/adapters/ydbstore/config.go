package ydbstore

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ydb-platform/ydb-go-sdk/v3"
	ycmeta "github.com/ydb-platform/ydb-go-yc-metadata"

	"ordersaga/shared/domain/apperr"
)

// Authentication modes of Config.Auth.
const (
	// AuthMetadata uses the IAM token of the function's (or VM's) service
	// account from the metadata service, and trusts Yandex Cloud's internal
	// CA. This is the mode of every cloud function.
	AuthMetadata = "metadata"
	// AuthToken sends Config.Token (an IAM token, e.g. the output of
	// `yc iam create-token`, or a local-ydb static token) with every call.
	AuthToken = "token"
	// AuthAnonymous sends no credentials (the local-ydb Docker image).
	AuthAnonymous = "anonymous"
)

// Defaults of Config.
const (
	DefaultMaxAttempts     = 8
	DefaultDialTimeout     = 10 * time.Second
	DefaultOutboxRetention = 7 * 24 * time.Hour
)

// Config configures Open. ConnectionString and Auth are required; the other
// fields have defaults.
type Config struct {
	// ConnectionString is the database DSN, e.g.
	// grpcs://ydb.serverless.yandexcloud.net:2135/ru-central1/b1g.../etn...
	// (or ...:2135/?database=/ru-central1/...), or grpc://localhost:2136/local
	// for local-ydb. Env YDB_CONNECTION_STRING.
	ConnectionString string
	// Auth is AuthMetadata, AuthToken or AuthAnonymous. Env YDB_AUTH.
	Auth string
	// Token is the access token for AuthToken (and must be empty otherwise).
	// Env YDB_TOKEN.
	Token string
	// Now is the clock (it stamps applied migrations); time.Now if nil.
	Now func() time.Time
	// OnTx, if set, is called once per InTx (readOnly=false) or View
	// (readOnly=true) call, not once per retry. Tests use it to count the
	// transactions a use case spends.
	OnTx func(readOnly bool)
	// MaxAttempts bounds how many times one InTx/View runs its closure when
	// YDB reports a retryable status (default DefaultMaxAttempts).
	MaxAttempts int
	// ImmediateWrites sends every write as its own statement after a key or
	// version read. Off (the
	// default), writes are deferred and sent together, with the commit
	// (deferred.go). Kept for comparison (package ydbtrips measures both)
	// and used by itself for the rerun after a deferred precondition failed.
	ImmediateWrites bool
	// DialTimeout bounds connecting and discovery in Open (default
	// DefaultDialTimeout).
	DialTimeout time.Duration
	// OutboxRetention is how long a published outbox row is kept before
	// YDB's TTL deletes it (expire_at = published_at + OutboxRetention;
	// default DefaultOutboxRetention).
	OutboxRetention time.Duration
}

// Validate checks c without connecting. Errors are Invalid and name the
// offending field.
func (c Config) Validate() error {
	var fields []apperr.FieldError
	bad := func(ptr, detail string) {
		fields = append(fields, apperr.FieldError{Pointer: ptr, Detail: detail})
	}
	if err := validateDSN(c.ConnectionString); err != "" {
		bad("/connection_string", err)
	}
	switch c.Auth {
	case AuthMetadata, AuthAnonymous:
		if c.Token != "" {
			bad("/token", "a token is only used with auth \"token\"")
		}
	case AuthToken:
		if strings.TrimSpace(c.Token) == "" {
			bad("/token", "auth \"token\" needs a token (YDB_TOKEN, e.g. $(yc iam create-token))")
		}
	default:
		bad("/auth", "auth must be metadata, token or anonymous (got "+quote(c.Auth)+")")
	}
	if c.MaxAttempts < 0 {
		bad("/max_attempts", fmt.Sprintf("must not be negative (got %d)", c.MaxAttempts))
	}
	if c.DialTimeout < 0 {
		bad("/dial_timeout", fmt.Sprintf("must not be negative (got %s)", c.DialTimeout))
	}
	if c.OutboxRetention < 0 {
		bad("/outbox_retention", fmt.Sprintf("must not be negative (got %s)", c.OutboxRetention))
	}
	if len(fields) > 0 {
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = f.Describe("the configuration")
		}
		return apperr.Invalidf(fields, "ydbstore: invalid configuration: %s", strings.Join(parts, "; "))
	}
	return nil
}

// validateDSN returns why dsn is unusable, or "".
func validateDSN(dsn string) string {
	if dsn == "" {
		return "a connection string is required (YDB_CONNECTION_STRING)"
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "the connection string is not a URL"
	}
	if u.Scheme != "grpc" && u.Scheme != "grpcs" {
		return "the connection string must start with grpc:// or grpcs://"
	}
	if u.Host == "" {
		return "the connection string has no host:port"
	}
	if strings.Trim(u.Path, "/") == "" && u.Query().Get("database") == "" {
		return "the connection string names no database (path or ?database=)"
	}
	return ""
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	c.MaxAttempts = cmp.Or(c.MaxAttempts, DefaultMaxAttempts)
	c.DialTimeout = cmp.Or(c.DialTimeout, DefaultDialTimeout)
	c.OutboxRetention = cmp.Or(c.OutboxRetention, DefaultOutboxRetention)
}

// driverOptions returns the ydb.Open options of c (c must be valid).
func (c Config) driverOptions() []ydb.Option {
	opts := []ydb.Option{ydb.WithDialTimeout(c.DialTimeout)}
	switch c.Auth {
	case AuthMetadata:
		// ydb-go-yc-metadata is the package ydb-go-yc's WithMetadataCredentials
		// and WithInternalCA forward to; importing it directly keeps ydb-go-yc's
		// service-account-key client (and the whole Yandex Cloud API proto
		// set it pulls in) out of the function zips.
		opts = append(opts, ydb.WithCredentials(ycmeta.NewInstanceServiceAccount()), ycmeta.WithInternalCA())
	case AuthToken:
		// The cloud endpoints' certificates chain to Yandex's CA; appending
		// it is harmless for other endpoints.
		opts = append(opts, ydb.WithAccessTokenCredentials(strings.TrimSpace(c.Token)), ycmeta.WithInternalCA())
	case AuthAnonymous:
		opts = append(opts, ydb.WithAnonymousCredentials())
	}
	return opts
}

// String describes c without its token (safe to log).
func (c Config) String() string {
	tok := ""
	if c.Token != "" {
		tok = " token=<redacted>"
	}
	return "ydb " + redactDSN(c.ConnectionString) + " auth=" + c.Auth + tok
}

// redactDSN drops a token=... query parameter from a DSN.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "<unparsable dsn>"
	}
	q := u.Query()
	if q.Has("token") {
		q.Set("token", "redacted")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func quote(s string) string { return `"` + s + `"` }

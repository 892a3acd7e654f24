package selfcheck

import (
	"net/url"
	"strconv"
	"strings"

	"ordersaga/shared/kit/config"
)

// Redacted stands in for a secret's value.
const Redacted = "[redacted]"

// Redact returns the settings of cfg a self-check shows, by environment
// variable name. Secrets never appear: YDB_TOKEN, YMQ_SECRET_ACCESS_KEY and
// ORDERSAGA_AUTH_TOKENS are replaced by Redacted when set (their presence is
// what matters), the Message Queue key id keeps only its first four
// characters, and URLs lose any user info and token query parameter.
func Redact(cfg config.Config) map[string]string {
	secret := func(v string) string {
		if v == "" {
			return ""
		}
		return Redacted
	}
	keyID := cfg.YMQ.AccessKeyID
	if len(keyID) > 4 {
		keyID = keyID[:4] + "…"
	}
	m := map[string]string{
		"ORDERSAGA_FUNCTION":      cfg.Function,
		"ORDERSAGA_STORE":         cfg.Store,
		"ORDERSAGA_QUEUE":         cfg.Queue,
		"ORDERSAGA_AUTH":          cfg.Auth,
		"ORDERSAGA_AUTH_TOKENS":   secret(cfg.AuthTokens),
		"ORDERSAGA_METRICS":       cfg.Metrics,
		"ORDERSAGA_LOG_LEVEL":     cfg.LogLevel,
		"SAGA_COMMANDS_QUEUE_URL": cleanURL(cfg.QueueURLs.SagaCommands),
		"SAGA_COMMANDS_DLQ_URL":   cleanURL(cfg.QueueURLs.SagaCommandsDLQ),
		"ORDER_EVENTS_QUEUE_URL":  cleanURL(cfg.QueueURLs.OrderEvents),
		"OUTBOX_SHARDS":           strconv.Itoa(cfg.Relay.Shards),
		"SAGA_LEASE":              cfg.Saga.Lease.String(),
		"PAYMENT_PROVIDER_URL":    cleanURL(cfg.Payment.ProviderURL),
	}
	switch cfg.Store {
	case config.StoreYDB:
		m["YDB_CONNECTION_STRING"] = cleanURL(cfg.YDB.ConnectionString)
		m["YDB_AUTH"] = cfg.YDB.Auth
		m["YDB_TOKEN"] = secret(cfg.YDB.Token)
	default:
		m["ORDERSAGA_SQLITE_PATH"] = cfg.SQLitePath
	}
	if cfg.Queue == config.QueueYMQ {
		m["YMQ_ENDPOINT"] = cleanURL(cfg.YMQ.Endpoint)
		m["YMQ_REGION"] = cfg.YMQ.Region
		m["YMQ_ACCESS_KEY_ID"] = keyID
		m["YMQ_SECRET_ACCESS_KEY"] = secret(cfg.YMQ.SecretAccessKey)
	}
	if cfg.Metrics == "monitoring" {
		m["MONITORING_FOLDER_ID"] = cfg.Monitoring.FolderID
	}
	for k, v := range m {
		if v == "" {
			delete(m, k)
		}
	}
	return m
}

// cleanURL drops user info and secret-looking query parameters from a URL;
// a value that does not parse as a URL with a scheme is returned as is
// unless it carries an '@' (then it is redacted whole).
func cleanURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if strings.Contains(raw, "@") {
			return Redacted
		}
		return raw
	}
	if u.User != nil {
		u.User = url.User("redacted")
	}
	q := u.Query()
	changed := false
	for k := range q {
		switch strings.ToLower(k) {
		case "token", "password", "secret", "key", "access_token":
			q.Set(k, "redacted")
			changed = true
		}
	}
	if changed {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

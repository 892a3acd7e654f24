package ydbstore

import (
	"strings"
	"testing"
	"time"

	"ordersaga/shared/domain/apperr"
)

func TestConfigValidate(t *testing.T) {
	const cloud = "grpcs://ydb.serverless.yandexcloud.net:2135/ru-central1/b1gabc/etnxyz"
	tests := []struct {
		name    string
		cfg     Config
		pointer string // "" = valid
	}{
		{"metadata", Config{ConnectionString: cloud, Auth: AuthMetadata}, ""},
		{"database as query parameter", Config{ConnectionString: "grpcs://ydb.serverless.yandexcloud.net:2135/?database=/ru-central1/b1g/etn", Auth: AuthMetadata}, ""},
		{"token", Config{ConnectionString: cloud, Auth: AuthToken, Token: "t1.abc"}, ""},
		{"local anonymous", Config{ConnectionString: "grpc://localhost:2136/local", Auth: AuthAnonymous}, ""},
		{"no dsn", Config{Auth: AuthAnonymous}, "/connection_string"},
		{"http dsn", Config{ConnectionString: "http://localhost:2136/local", Auth: AuthAnonymous}, "/connection_string"},
		{"no host", Config{ConnectionString: "grpc:///local", Auth: AuthAnonymous}, "/connection_string"},
		{"no database", Config{ConnectionString: "grpc://localhost:2136", Auth: AuthAnonymous}, "/connection_string"},
		{"unparsable", Config{ConnectionString: "grpc://[::1", Auth: AuthAnonymous}, "/connection_string"},
		{"token missing", Config{ConnectionString: cloud, Auth: AuthToken, Token: "  "}, "/token"},
		{"token with metadata", Config{ConnectionString: cloud, Auth: AuthMetadata, Token: "t1"}, "/token"},
		{"no auth", Config{ConnectionString: cloud}, "/auth"},
		{"unknown auth", Config{ConnectionString: cloud, Auth: "iam"}, "/auth"},
		{"negative max attempts", Config{ConnectionString: cloud, Auth: AuthMetadata, MaxAttempts: -1}, "/max_attempts"},
		{"negative dial timeout", Config{ConnectionString: cloud, Auth: AuthMetadata, DialTimeout: -time.Second}, "/dial_timeout"},
		{"negative outbox retention", Config{ConnectionString: cloud, Auth: AuthMetadata, OutboxRetention: -time.Hour}, "/outbox_retention"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.pointer == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !apperr.Is(err, apperr.Invalid) {
				t.Fatalf("Validate = %v, want Invalid", err)
			}
			fields := apperr.Fields(err)
			if len(fields) != 1 || fields[0].Pointer != tt.pointer {
				t.Errorf("fields = %+v, want one at %s", fields, tt.pointer)
			}
			if !strings.Contains(err.Error(), "field "+tt.pointer+" ") {
				t.Errorf("error %q does not name %s", err, tt.pointer)
			}
		})
	}
}

func TestConfigDefaultsAndOptions(t *testing.T) {
	c := Config{ConnectionString: "grpc://localhost:2136/local", Auth: AuthAnonymous}
	c.setDefaults()
	if c.Now == nil || c.MaxAttempts != DefaultMaxAttempts || c.DialTimeout != DefaultDialTimeout ||
		c.OutboxRetention != DefaultOutboxRetention {
		t.Errorf("defaults not applied: %+v", c)
	}
	kept := Config{MaxAttempts: 2, DialTimeout: time.Second, OutboxRetention: time.Hour}
	kept.setDefaults()
	if kept.MaxAttempts != 2 || kept.DialTimeout != time.Second || kept.OutboxRetention != time.Hour {
		t.Errorf("explicit values overridden: %+v", kept)
	}
	// dial timeout + credentials (+ Yandex CA for the cloud modes)
	for auth, want := range map[string]int{AuthMetadata: 3, AuthToken: 3, AuthAnonymous: 2} {
		if got := len(Config{Auth: auth, Token: "t"}.driverOptions()); got != want {
			t.Errorf("%s: %d driver options, want %d", auth, got, want)
		}
	}
}

func TestConfigStringRedacts(t *testing.T) {
	c := Config{ConnectionString: "grpcs://h:2135/db?token=secret1", Auth: AuthToken, Token: "secret2"}
	s := c.String()
	if strings.Contains(s, "secret1") || strings.Contains(s, "secret2") {
		t.Errorf("String leaks a token: %s", s)
	}
	if !strings.Contains(s, "grpcs://h:2135/db") || !strings.Contains(s, "auth=token") {
		t.Errorf("String = %s", s)
	}
}

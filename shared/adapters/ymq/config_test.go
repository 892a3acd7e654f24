package ymq

import (
	"strings"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// Zero fields take their defaults; a missing key, a bad endpoint or a
// negative MaxAttempts is refused with an error naming the field.
func TestNewDefaultsAndRefusals(t *testing.T) {
	q, err := New(Config{AccessKeyID: "k", SecretAccessKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.endpoint.String(); got != DefaultEndpoint {
		t.Errorf("endpoint = %s, want %s", got, DefaultEndpoint)
	}
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no access key id", Config{SecretAccessKey: "s"}, "AccessKeyID is required"},
		{"no secret", Config{AccessKeyID: "k"}, "SecretAccessKey is required"},
		{"bad endpoint", Config{Endpoint: "ftp://x", AccessKeyID: "k", SecretAccessKey: "s"}, "Endpoint must be an http(s) URL with a host"},
		{"negative max attempts", Config{AccessKeyID: "k", SecretAccessKey: "s", MaxAttempts: -1}, "MaxAttempts must not be negative (got -1)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q, err := New(tc.cfg)
			if q != nil || !apperr.Is(err, apperr.Invalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New = %v, %v; want Invalid containing %q", q, err, tc.want)
			}
		})
	}
}

package ycmetrics

import (
	"context"
	"errors"
	"sync"

	ycmeta "github.com/ydb-platform/ydb-go-yc-metadata"
)

// TokenSource supplies IAM tokens for the write API. Implementations are
// safe for concurrent use and cache tokens; errors are returned as is and
// classified Unauthenticated by Flush.
type TokenSource interface {
	// IAMToken returns a currently valid IAM token.
	IAMToken(ctx context.Context) (string, error)
}

// TokenFunc adapts a function to TokenSource (tests, static tokens).
type TokenFunc func(ctx context.Context) (string, error)

var _ TokenSource = TokenFunc(nil)

// IAMToken calls f.
func (f TokenFunc) IAMToken(ctx context.Context) (string, error) { return f(ctx) }

// InstanceServiceAccount returns the token source of the function's service
// account: the metadata service (169.254.169.254, platform-notes §1.5) read
// by ydb-go-yc-metadata, which caches the token and refreshes it in the
// background — the same provider the YDB adapter authenticates with, so the
// zips carry one metadata client, not also the Yandex Cloud SDK's. The
// provider starts its refresh goroutine when created, so it is created on
// the first IAMToken call, not here.
func InstanceServiceAccount() TokenSource { return &lazySource{} }

type lazySource struct {
	url  string // the metadata token URL; "" = the platform's (tests set a fake)
	once sync.Once
	src  *ycmeta.InstanceServiceAccountCredentials
}

func (l *lazySource) IAMToken(ctx context.Context) (string, error) {
	l.once.Do(func() {
		var opts []ycmeta.InstanceServiceAccountCredentialsOption
		if l.url != "" {
			opts = append(opts, ycmeta.WithInstanceServiceAccountURL(l.url))
		}
		l.src = ycmeta.NewInstanceServiceAccount(opts...)
	})
	tok, err := l.src.Token(ctx)
	if err != nil {
		return "", err
	}
	if tok == "" {
		return "", errors.New("ycmetrics: the metadata service returned an empty IAM token")
	}
	return tok, nil
}

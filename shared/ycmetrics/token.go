package ycmetrics

import (
	"context"
	"errors"
	"sync"

	"github.com/yandex-cloud/go-sdk/v2/credentials"
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

// FromCredentials adapts go-sdk credentials (e.g. credentials.IAMToken(t)).
func FromCredentials(c credentials.NonExchangeableCredentials) TokenSource {
	return credsSource{c}
}

type credsSource struct {
	c credentials.NonExchangeableCredentials
}

func (s credsSource) IAMToken(ctx context.Context) (string, error) {
	tok, err := s.c.IAMToken(ctx)
	if err != nil {
		return "", err
	}
	if tok == nil || tok.Token == "" {
		return "", errors.New("ycmetrics: credentials returned an empty IAM token")
	}
	return tok.Token, nil
}

// InstanceServiceAccount returns the token source of the function's service
// account: go-sdk's credentials.InstanceServiceAccount(), which reads the
// metadata service (169.254.169.254) and caches and refreshes the token.
// The provider starts a background refresh goroutine when created, so it is
// created on the first IAMToken call, not here.
func InstanceServiceAccount() TokenSource { return &lazySource{} }

type lazySource struct {
	once sync.Once
	src  TokenSource
}

func (l *lazySource) IAMToken(ctx context.Context) (string, error) {
	l.once.Do(func() { l.src = FromCredentials(credentials.InstanceServiceAccount()) })
	return l.src.IAMToken(ctx)
}

package app

import (
	"net/http"

	"ordersaga/shared/kit/config"
	"ordersaga/shared/transport/adminapi"
	"ordersaga/shared/transport/console"
	"ordersaga/shared/transport/identity"
)

// console builds the operator console on the App's use cases, authorized
// by the admin API's rule. It fails as console.New does.
func (a *App) console(cfg config.Config, auth identity.Authenticator) (http.Handler, error) {
	return console.New(console.Config{
		Authorize: func(r *http.Request) (identity.Identity, error) { return adminapi.Authorize(auth, r) },
		Redrive:   a.Commands.Redrive, Orders: a.Commands.Orders, Stock: a.Commands.Stock,
		Breakers: func() []console.Breaker {
			var out []console.Breaker
			for _, b := range a.Queries.Breakers.List() {
				out = append(out, console.Breaker{Dependency: b.Dependency, State: b.State, Since: b.Since})
			}
			return out
		},
		SecureCookie: cfg.Auth == config.AuthGateway,
	})
}

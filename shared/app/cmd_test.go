package app_test

import (
	"strings"

	"ordersaga/shared/identity"
	"ordersaga/shared/order"
	"ordersaga/shared/orders"
)

func createCmd(key string) orders.CreateCommand {
	req, err := order.DecodeRequest(strings.NewReader(orderBody))
	if err != nil {
		panic(err)
	}
	return orders.CreateCommand{Caller: identity.Identity{Subject: "dev-user", Role: identity.RoleUser}, Key: key, Request: req}
}

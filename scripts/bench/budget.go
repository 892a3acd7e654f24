package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"sync/atomic"
)

// benchTxBudget counts store transactions per new order and per replay.
func benchTxBudget() []row {
	dir, err := os.MkdirTemp("", "bench-tx")
	must(err)
	defer os.RemoveAll(dir)
	var n atomic.Int64
	a := newApp(dir, func(bool) { n.Add(1) })
	defer a.Close()
	srv := httptest.NewServer(a.HTTP)
	defer srv.Close()
	post := func(key string) {
		_, err := postOrder(srv.URL, key)
		must(err)
	}
	const k = 50
	n.Store(0)
	for i := 0; i < k; i++ {
		post(fmt.Sprintf("tx-%d", i))
	}
	perNew := float64(n.Load()) / k
	n.Store(0)
	for i := 0; i < k; i++ {
		post(fmt.Sprintf("tx-%d", i))
	}
	perReplay := float64(n.Load()) / k
	return []row{
		{"store transactions per new order", fmt.Sprintf("%.2f", perNew), "budget 2", fmt.Sprintf("%.2f", perNew/2)},
		{"store transactions per replay", fmt.Sprintf("%.2f", perReplay), "budget 1", fmt.Sprintf("%.2f", perReplay)},
	}
}

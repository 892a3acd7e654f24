package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"ordersaga/shared/httpapi"
	"ordersaga/shared/inventory"
	"ordersaga/shared/order"
)

// Stock routes (see terraform/api/openapi.yaml). In the cloud nothing else
// creates stock: an operator sets it here after the first deploy.
const (
	RouteStockList = "GET /admin/stock"
	RouteStockSet  = "PUT /admin/stock/{sku}"
)

// StockAdmin is what the admin API needs to manage stock (stock.Service).
type StockAdmin interface {
	List(ctx context.Context) ([]inventory.Stock, error)
	SetAvailable(ctx context.Context, actor, sku string, available int64) (inventory.Stock, error)
}

// Option configures the admin API.
type Option func(*handler)

// WithStock adds the stock routes.
func WithStock(s StockAdmin) Option {
	return func(h *handler) {
		h.stock = s
		h.rt.HandleFunc(RouteStockList, h.stockList)
		h.rt.HandleFunc(RouteStockSet, h.stockSet)
	}
}

// ConsolePath is where the operator console is mounted (package console).
const ConsolePath = "/admin/console"

// WithConsole serves the operator console at ConsolePath and below. The
// console must authorize each request with Authorize (the same rule as
// every admin route) and change nothing through a cookie alone.
func WithConsole(console http.Handler) Option {
	return func(h *handler) { h.console = console }
}

// StockView is one SKU's stock as the admin API shows it.
type StockView struct {
	SKU       string `json:"sku"`
	Available int64  `json:"available"`
	Reserved  int64  `json:"reserved"`
	// Sold counts the units of CONFIRMED orders: confirming settles a
	// reservation, moving its units from reserved to sold.
	Sold      int64     `json:"sold"`
	UpdatedAt time.Time `json:"updated_at"`
}

func stockView(s inventory.Stock) StockView {
	return StockView{SKU: s.SKU, Available: s.Available, Reserved: s.Reserved, Sold: s.Sold, UpdatedAt: s.UpdatedAt}
}

func (h *handler) stockList(w http.ResponseWriter, r *http.Request) {
	list, err := h.stock.List(r.Context())
	if err != nil {
		writeErr(w, r, err)
		return
	}
	out := make([]StockView, len(list))
	for i, s := range list {
		out[i] = stockView(s)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"stock": out})
}

// stockSet sets a SKU's available quantity: body {"available": N}.
func (h *handler) stockSet(w http.ResponseWriter, r *http.Request) {
	// The path is percent-decoded: check the SKU before anything is read or written.
	if sku := r.PathValue("sku"); !order.ValidSKU(sku) {
		writeErr(w, r, invalid("/sku", fmt.Sprintf("must be 1-%d characters of letters, digits, '.', '_' or '-'", order.MaxSKULen)))
		return
	}
	body, err := readBody(r, true, "available")
	if err != nil {
		writeErr(w, r, err)
		return
	}
	raw, ok := body["available"]
	var n int64
	if !ok || json.Unmarshal(raw, &n) != nil {
		writeErr(w, r, invalid("/available", "must be an integer"))
		return
	}
	st, err := h.stock.SetAvailable(r.Context(), actor(r), r.PathValue("sku"), n)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, stockView(st))
}

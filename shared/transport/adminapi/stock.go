package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"ordersaga/shared/domain/inventory"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/transport/httpapi"
)

// Stock routes (see terraform/api/openapi.yaml). In the cloud nothing else
// creates stock: an operator sets it here after the first deploy.
const (
	RouteStockList      = "GET /admin/stock"
	RouteStockSet       = "PUT /admin/stock/{sku}"
	RouteStockShards    = "PUT /admin/stock/{sku}/shards"
	RouteStockRebalance = "POST /admin/stock/{sku}/rebalance"
)

// StockAdmin is what the admin API needs to manage stock (stock.Service).
type StockAdmin interface {
	List(ctx context.Context) ([]inventory.Stock, error)
	SetAvailable(ctx context.Context, actor, sku string, available int64) (inventory.Stock, error)
	// SetShards sets how many sub-rows a SKU's reservations spread over
	// (1 = none); Invalid for a count outside 1..inventory.MaxShards.
	SetShards(ctx context.Context, actor, sku string, shards int64) (inventory.Stock, error)
	// Rebalance spreads a SKU's available units evenly over its sub-rows
	// and reports how many moved; NotFound for an unknown SKU.
	Rebalance(ctx context.Context, actor, sku string) (inventory.Stock, int64, error)
}

// ConsolePath is where the operator console is mounted (package console).
const ConsolePath = "/admin/console"

// StockView is one SKU's stock as the admin API shows it.
type StockView struct {
	SKU       string `json:"sku"`
	Available int64  `json:"available"`
	Reserved  int64  `json:"reserved"`
	// Sold counts the units of CONFIRMED orders: confirming settles a
	// reservation, moving its units from reserved to sold.
	Sold int64 `json:"sold"`
	// Shards is the number of sub-rows new reservations spread over (1:
	// the SKU is not sharded). The counts above are summed over them.
	Shards    int64     `json:"shards"`
	UpdatedAt time.Time `json:"updated_at"`
}

func stockView(s inventory.Stock) StockView {
	return StockView{SKU: s.SKU, Available: s.Available, Reserved: s.Reserved, Sold: s.Sold,
		Shards: max(s.Shards, 1), UpdatedAt: s.UpdatedAt}
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
	if !validSKUPath(w, r) {
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

// validSKUPath checks the {sku} path value (percent-decoded) before anything
// is read or written, answering 400 when it is not a SKU.
func validSKUPath(w http.ResponseWriter, r *http.Request) bool {
	if sku := r.PathValue("sku"); !order.ValidSKU(sku) {
		writeErr(w, r, invalid("/sku", fmt.Sprintf("must be 1-%d characters of letters, digits, '.', '_' or '-'", order.MaxSKULen)))
		return false
	}
	return true
}

// stockShards sets how many sub-rows a SKU spreads over: body {"shards": N}.
func (h *handler) stockShards(w http.ResponseWriter, r *http.Request) {
	if !validSKUPath(w, r) {
		return
	}
	body, err := readBody(r, true, "shards")
	if err != nil {
		writeErr(w, r, err)
		return
	}
	raw, ok := body["shards"]
	var n int64
	if !ok || json.Unmarshal(raw, &n) != nil {
		writeErr(w, r, invalid("/shards", "must be an integer"))
		return
	}
	st, err := h.stock.SetShards(r.Context(), actor(r), r.PathValue("sku"), n)
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, stockView(st))
}

// stockRebalance spreads a SKU's available units evenly over its sub-rows
// (no body, or {}); it answers the stock and how many units moved.
func (h *handler) stockRebalance(w http.ResponseWriter, r *http.Request) {
	if !validSKUPath(w, r) {
		return
	}
	if _, err := readBody(r, false); err != nil {
		writeErr(w, r, err)
		return
	}
	st, moved, err := h.stock.Rebalance(r.Context(), actor(r), r.PathValue("sku"))
	if err != nil {
		writeErr(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"stock": stockView(st), "moved": moved})
}

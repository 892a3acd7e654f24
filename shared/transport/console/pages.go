package console

import (
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"ordersaga/shared/app/orders"
	"ordersaga/shared/app/redrive"
	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/dlq"
	"ordersaga/shared/domain/order"
	"ordersaga/shared/domain/saga"
	"ordersaga/shared/domain/store"
)

// countScan bounds the index entries each overview count reads.
const countScan = 500

// searchScan bounds the sagas (whole rows) a search reads per state: on
// YDB every bucket may return that many before the newest are kept.
const searchScan = 100

// openScan bounds the open dead letters the overview groups.
const openScan = 500

type dlGroup struct {
	Source    string
	ErrorType string
	Count     int
}

type overviewData struct {
	Counts     []orders.StateCount
	Scan       int
	Open       []dlGroup
	OpenTotal  int
	OpenMore   bool
	Breakers   []Breaker
	Pending    int
	OldestAge  time.Duration
	DeadOutbox int
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	var d overviewData
	var err error
	d.Scan = countScan
	if d.Counts, err = h.d.Orders.SagaCounts(ctx, caller, countScan); err != nil {
		h.fail(w, r, caller, err)
		return
	}
	list, err := h.d.Redrive.List(ctx, dlq.Filter{Status: dlq.StatusOpen}, dlq.Page{Limit: openScan})
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	d.OpenTotal, d.OpenMore = len(list.Entries), list.NextCursor != ""
	d.Open = groupEntries(list.Entries)
	if d.Pending, d.OldestAge, err = h.d.Orders.Backlog(ctx, caller); err != nil {
		h.fail(w, r, caller, err)
		return
	}
	if h.d.Breakers != nil {
		d.Breakers = h.d.Breakers()
	}
	h.render(w, http.StatusOK, "overview", h.page(r, "Overview", d))
}

func groupEntries(es []redrive.Entry) []dlGroup {
	idx := map[[2]string]int{}
	var out []dlGroup
	for _, e := range es {
		k := [2]string{string(e.Source), e.ErrorType}
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, dlGroup{Source: k[0], ErrorType: k[1]})
		}
		out[i].Count++
	}
	slices.SortFunc(out, func(a, b dlGroup) int {
		if a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Source+a.ErrorType, b.Source+b.ErrorType)
	})
	return out
}

type searchData struct {
	Query    url.Values
	Results  []orders.SagaRef
	Searched bool
	Scan     int
	// Customer is set for a search by customer: its page of orders,
	// whether it is a later page, and the query of the next older page.
	Customer   string
	Orders     []orders.OrderRef
	Paged      bool
	OlderQuery template.URL // url.Values.Encode of the next page's query
	PageSize   int
}

// customerPage is how many of a customer's orders one page shows.
const customerPage = 20

// orderSearch finds an order by id, by idempotency key and caller, lists a
// customer's orders newest first a page at a time (every order, from the
// store's index by customer), or the recent orders in a saga state.
func (h *handler) orderSearch(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	q := r.URL.Query()
	switch {
	case q.Get("id") != "":
		http.Redirect(w, r, Path+"/orders/"+url.PathEscape(strings.TrimSpace(q.Get("id"))), http.StatusSeeOther)
		return
	case q.Get("key") != "":
		v, err := h.d.Orders.FindByKey(ctx, caller, q.Get("caller"), q.Get("key"))
		if err != nil {
			h.fail(w, r, caller, err)
			return
		}
		http.Redirect(w, r, Path+"/orders/"+url.PathEscape(v.ID), http.StatusSeeOther)
		return
	}
	d := searchData{Query: q, Scan: searchScan}
	switch {
	case q.Get("customer") != "":
		if err := h.customerOrders(r, q, &d); err != nil {
			h.fail(w, r, caller, err)
			return
		}
	case q.Has("customer") || q.Has("state"):
		d.Searched = true
		refs, err := h.d.Orders.RecentSagas(ctx, caller, "", searchScan)
		if err != nil {
			h.fail(w, r, caller, err)
			return
		}
		for _, ref := range refs {
			if st := q.Get("state"); st == "" || string(ref.State) == st {
				d.Results = append(d.Results, ref)
			}
		}
	}
	h.render(w, http.StatusOK, "orders", h.page(r, "Find an order", d))
}

// customerOrders fills d with one page of the customer's orders: the
// newest, or those older than the cursor after_at (RFC 3339, empty for
// the zero time) and after_id. A saga state cannot narrow it (a separate
// search), and a malformed cursor is refused.
func (h *handler) customerOrders(r *http.Request, q url.Values, d *searchData) error {
	if q.Get("state") != "" {
		return apperr.Invalidf([]apperr.FieldError{{Pointer: "/state", Detail: "the saga-state list is a separate search"}},
			"a customer's orders are listed in every state")
	}
	var after store.OrderCursor
	if id := q.Get("after_id"); id != "" {
		after.ID = id
		if at := q.Get("after_at"); at != "" {
			t, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				return apperr.Invalidf([]apperr.FieldError{{Pointer: "/after_at", Detail: "must be an RFC 3339 time"}},
					"invalid page cursor time %q", at)
			}
			after.CreatedAt = t
		}
	}
	p, err := h.d.Orders.ListByCustomer(r.Context(), sessionOf(r).caller, q.Get("customer"), after, customerPage)
	if err != nil {
		return err
	}
	d.Customer, d.Orders, d.Paged, d.PageSize = q.Get("customer"), p.Orders, !after.IsZero(), customerPage
	if !p.Next.IsZero() {
		nq := url.Values{"customer": {d.Customer}, "after_id": {p.Next.ID}}
		if !p.Next.CreatedAt.IsZero() {
			nq.Set("after_at", p.Next.CreatedAt.UTC().Format(time.RFC3339Nano))
		}
		d.OlderQuery = template.URL(nq.Encode()) // every value query-escaped by Encode
	}
	return nil
}

type orderData struct {
	Order       orders.View
	DeadLetters []redrive.Entry
	Events      []string
	Timeline    []timelineRow
}

// timelineRow is one event of a saga's timeline: a step-log line (a step,
// a compensation, a retry, a breaker wait: outcome "waiting"), or
// recovery's last resend, which only the saga row records.
type timelineRow struct {
	saga.LogEntry
	Redrive *orders.ResendMark
}

// timeline lists the saga's step log in order with recovery's last
// resend placed by its time: an exact one after every line at or before
// it, one known only to precede the row's last update before every line
// at or after that time.
func timeline(v *orders.SagaView) []timelineRow {
	out := make([]timelineRow, 0, len(v.History)+1)
	for _, e := range v.History {
		out = append(out, timelineRow{LogEntry: e})
	}
	m := v.LastResend
	if m == nil {
		return out
	}
	at := len(out)
	for i, r := range out {
		if r.At.After(m.At) || (!m.Exact && r.At.Equal(m.At)) {
			at = i
			break
		}
	}
	row := timelineRow{LogEntry: saga.LogEntry{Step: v.Step, StateAfter: v.State, At: m.At}, Redrive: m}
	return slices.Insert(out, at, row)
}

// orderPage shows an order, its saga timeline and its correlation chain.
func (h *handler) orderPage(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	v, err := h.d.Orders.Get(ctx, caller, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	d := orderData{Order: v}
	if dl, err := h.d.Redrive.List(ctx, dlq.Filter{OrderID: v.ID}, dlq.Page{Limit: 50}); err == nil {
		d.DeadLetters = dl.Entries
	}
	if v.Saga != nil {
		d.Timeline = timeline(v.Saga)
		seen := map[string]bool{}
		for _, e := range v.Saga.History {
			if e.MessageID != "" && !seen[e.MessageID] {
				seen[e.MessageID] = true
				d.Events = append(d.Events, e.MessageID)
			}
		}
	}
	h.render(w, http.StatusOK, "order", h.page(r, "Order "+v.ID, d))
}

// listFields are the admin API's dead-letter list filters (GET /admin/dlq).
var listFields = []string{"source", "status", "error_type", "order_id", "saga_id", "from", "to", "flagged", "cursor", "limit"}

type dlqData struct {
	Query  url.Values
	Groups []entryGroup
	Total  int
	Next   string
	// NextQuery is the query of the next page.
	NextQuery string
	Filtered  bool
	MaxPerRun int
}

type entryGroup struct {
	ErrorType string
	Entries   []redrive.Entry
}

// listCommand builds the list command from the query, as the admin API does.
func listCommand(q url.Values) (redrive.Command, error) {
	for k := range q {
		if !slices.Contains(listFields, k) {
			return redrive.Command{}, apperr.Invalidf([]apperr.FieldError{{Pointer: "/" + k,
				Detail: "unknown filter (known: " + strings.Join(listFields, ", ") + ")"}}, "unknown filter %q", k)
		}
	}
	cmd := redrive.Command{Action: redrive.ActionList, Source: q.Get("source"), Cursor: q.Get("cursor")}
	f, err := filterOf(q)
	if err != nil {
		return cmd, err
	}
	cmd.Filter = f
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return cmd, apperr.Invalidf([]apperr.FieldError{{Pointer: "/limit", Detail: "must be an integer"}}, "invalid limit")
		}
		cmd.Limit = n
	}
	return cmd, nil
}

// filterOf reads the filter fields of a query or form; nil when none is set.
func filterOf(q url.Values) (*redrive.CommandFilter, error) {
	f := &redrive.CommandFilter{Status: q.Get("status"), ErrorType: q.Get("error_type"), OrderID: q.Get("order_id"),
		SagaID: q.Get("saga_id"), From: q.Get("from"), To: q.Get("to")}
	if v := q.Get("flagged"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, apperr.Invalidf([]apperr.FieldError{{Pointer: "/flagged", Detail: "must be true or false"}}, "invalid flagged")
		}
		f.Flagged = &b
	}
	if *f == (redrive.CommandFilter{}) {
		return nil, nil
	}
	return f, nil
}

func (h *handler) deadLetters(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	q := r.URL.Query()
	for k, vs := range q { // an empty form field is no filter
		if len(vs) == 1 && vs[0] == "" {
			q.Del(k)
		}
	}
	cmd, err := listCommand(q)
	var out any
	if err == nil {
		out, err = h.d.Redrive.Execute(ctx, cmd)
	}
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	res := out.(redrive.ListResult)
	d := dlqData{Query: q, Total: len(res.Entries), Next: res.NextCursor, Filtered: cmd.Filter != nil || cmd.Source != "",
		MaxPerRun: redrive.DefaultMaxPerCall}
	if res.NextCursor != "" {
		nq := url.Values{}
		for k, v := range q {
			nq[k] = v
		}
		nq.Set("cursor", res.NextCursor)
		d.NextQuery = nq.Encode()
	}
	idx := map[string]int{}
	for _, e := range res.Entries {
		i, ok := idx[e.ErrorType]
		if !ok {
			i = len(d.Groups)
			idx[e.ErrorType] = i
			d.Groups = append(d.Groups, entryGroup{ErrorType: e.ErrorType})
		}
		d.Groups[i].Entries = append(d.Groups[i].Entries, e)
	}
	h.render(w, http.StatusOK, "dlq", h.page(r, "Dead letters", d))
}

func (h *handler) deadLetter(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	id := r.PathValue("id")
	if !redrive.ValidID(id) {
		h.fail(w, r, caller, apperr.New(apperr.NotFound, "dead letter not found"))
		return
	}
	d, err := h.d.Redrive.Show(ctx, id)
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	h.render(w, http.StatusOK, "deadletter", h.page(r, "Dead letter "+id, d))
}

type redriveData struct {
	Report  redrive.Report
	Confirm bool // the report is a dry run: offer to confirm it
	Rate    string
	Force   bool
	// Follow are the redriven entries the progress page follows (the
	// first maxProgress), and Unfollowed how many more there are.
	Follow     []string
	Unfollowed int
}

// redrive runs a dry run of a selection (ids, or a filter with a maximum
// and a rate), or, with confirm=1, redrives the ids that dry run selected
// at that rate. Audited with the caller as actor.
func (h *handler) redrive(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	f := r.PostForm
	confirm := f.Get("confirm") == "1"
	cmd := redrive.Command{Action: redrive.ActionRedrive, Actor: caller.Subject, DryRun: !confirm,
		Force: f.Get("force") == "1", Reason: strings.TrimSpace(f.Get("reason"))}
	var fields []apperr.FieldError
	if v := strings.TrimSpace(f.Get("rate_per_sec")); v != "" {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			fields = append(fields, apperr.FieldError{Pointer: "/rate_per_sec", Detail: "must be a number"})
		}
		cmd.RatePerSec = x
	}
	switch ids := f["ids"]; {
	case len(ids) > 0:
		cmd.IDs = ids
	case f.Get("mode") == "filter":
		cmd.Source = f.Get("source")
		filter, err := filterOf(f)
		if err != nil {
			h.fail(w, r, caller, err)
			return
		}
		cmd.Filter = filter
		if cmd.Filter == nil && cmd.Source == "" {
			cmd.All = true
		}
		if v := strings.TrimSpace(f.Get("max")); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				fields = append(fields, apperr.FieldError{Pointer: "/max", Detail: "must be an integer"})
			}
			cmd.Max = n
		}
	default:
		fields = append(fields, apperr.FieldError{Pointer: "/ids", Detail: "select at least one dead letter"})
	}
	if len(fields) > 0 {
		h.fail(w, r, caller, apperr.Invalidf(fields, "invalid redrive: %s %s", fields[0].Pointer, fields[0].Detail))
		return
	}
	out, err := h.d.Redrive.Execute(ctx, cmd)
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	rep := out.(redrive.Report)
	d := redriveData{Report: rep, Confirm: rep.DryRun && rep.WouldRedrive > 0, Rate: f.Get("rate_per_sec"), Force: cmd.Force}
	for _, it := range rep.Items {
		if it.Outcome != redrive.OutcomeRedriven {
			continue
		}
		if len(d.Follow) < maxProgress {
			d.Follow = append(d.Follow, it.ID)
		} else {
			d.Unfollowed++
		}
	}
	title := "Redrive"
	if rep.DryRun {
		title = "Redrive dry run"
	}
	h.render(w, http.StatusOK, "redrive", h.page(r, title, d))
}

type progressData struct {
	Entries []redrive.Entry
	Open    int
	Query   string
}

// maxProgress bounds the entries a progress page follows (each is one read).
const maxProgress = 50

// progress shows the status of redriven entries, reloading until each is
// resolved (its work finished) or back in the store as open.
func (h *handler) progress(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	ids := r.URL.Query()["id"]
	if len(ids) == 0 || len(ids) > maxProgress {
		h.fail(w, r, caller, apperr.Invalidf([]apperr.FieldError{{Pointer: "/id", Detail: "give 1 to 50 ids"}}, "give 1 to %d ids", maxProgress))
		return
	}
	d := progressData{Query: r.URL.RawQuery}
	for _, id := range ids {
		if !redrive.ValidID(id) {
			h.fail(w, r, caller, apperr.New(apperr.NotFound, "dead letter not found"))
			return
		}
		det, err := h.d.Redrive.Show(ctx, id)
		if err != nil {
			h.fail(w, r, caller, err)
			return
		}
		d.Entries = append(d.Entries, det.Entry)
		if det.Status == dlq.StatusRedriven {
			d.Open++
		}
	}
	v := h.page(r, "Redrive progress", d)
	if d.Open > 0 {
		v.Refresh = 2
	}
	h.render(w, http.StatusOK, "progress", v)
}

func (h *handler) discard(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	id := r.PathValue("id")
	cmd := redrive.Command{Action: redrive.ActionDiscard, Actor: caller.Subject, IDs: []string{id},
		Reason: strings.TrimSpace(r.PostForm.Get("reason"))}
	out, err := h.d.Redrive.Execute(ctx, cmd)
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	h.render(w, http.StatusOK, "discarded", h.page(r, "Discarded", out.(redrive.ChangeReport)))
}

func (h *handler) audit(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	recs, err := h.d.Redrive.RecentAudit(ctx, 100)
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	h.render(w, http.StatusOK, "audit", h.page(r, "Audit log", recs))
}

func (h *handler) stock(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	list, err := h.d.Stock.List(ctx)
	if err != nil {
		h.fail(w, r, caller, err)
		return
	}
	h.render(w, http.StatusOK, "stock", h.page(r, "Stock", list))
}

// setStock sets a SKU's available quantity through the stock use case
// (validated and audited there), then shows the stock page.
func (h *handler) setStock(w http.ResponseWriter, r *http.Request) {
	ctx, caller := r.Context(), sessionOf(r).caller
	n, err := strconv.ParseInt(strings.TrimSpace(r.PostForm.Get("available")), 10, 64)
	if err != nil {
		h.fail(w, r, caller, apperr.Invalidf([]apperr.FieldError{{Pointer: "/available", Detail: "must be an integer"}}, "available must be an integer"))
		return
	}
	sku := strings.TrimSpace(r.PostForm.Get("sku"))
	if !order.ValidSKU(sku) {
		h.fail(w, r, caller, apperr.Invalidf([]apperr.FieldError{{Pointer: "/sku", Detail: "must be 1-64 letters, digits, '.', '_' or '-'"}}, "invalid SKU"))
		return
	}
	if _, err := h.d.Stock.SetAvailable(ctx, caller.Subject, sku, n); err != nil {
		h.fail(w, r, caller, err)
		return
	}
	http.Redirect(w, r, Path+"/stock", http.StatusSeeOther)
}

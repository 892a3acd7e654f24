// Package consoletest drives the operator console (shared/transport/console) in a real
// browser — Debian's chromium, headless, through chromedp — against the
// local runner (scripts/localcloud) started with the local faults. It is its
// own module so that chromedp never enters the root module's graph.
//
//	cd scripts/consoletest && go test -count=1 .
//
// Without chromium on the PATH (or CHROMIUM_PATH) the tests skip, saying so.
// With CONSOLETEST_SCREENSHOTS=<dir> they also save the screenshots that
// docs/console.md shows.
package consoletest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// runner is the local runner under test.
type runner struct {
	t    *testing.T
	base string
	// signin is the console sign-in link the runner printed.
	signin string
}

// startRunner builds and starts scripts/localcloud on a free port with the
// local faults, and returns once it has printed its startup lines.
func startRunner(t *testing.T) *runner {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "localcloud")
	build := exec.Command("go", "build", "-o", bin, "./scripts/localcloud")
	build.Dir = root
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the local runner: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-data", t.TempDir(), "-quiet",
		"-triggers", filepath.Join(root, "triggers/triggers.yaml"))
	// Quick retries; recovery never resends a stuck saga by itself during
	// the test, so the operator's redrive is what moves it.
	cmd.Env = append(os.Environ(), "SAGA_BACKOFF_CAP=1s", "RELAY_MAX_ATTEMPTS=3", "RELAY_BACKOFF_CAP=2s",
		"RECOVERY_STUCK_AFTER=1h", "LOCAL_VISIBILITY_TIMEOUT=1s",
		"LOCAL_FAULT_PUBLISH_SKU=sku-4", "LOCAL_FAULT_ADVANCER_SKU=sku-5")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	r := &runner{t: t}
	apiRe := regexp.MustCompile(`API:\s+(http://\S+)`)
	consoleRe := regexp.MustCompile(`console:\s+(http://\S+)`)
	lines := bufio.NewScanner(stdout)
	for (r.base == "" || r.signin == "") && lines.Scan() {
		if m := apiRe.FindStringSubmatch(lines.Text()); m != nil {
			r.base = m[1]
		}
		if m := consoleRe.FindStringSubmatch(lines.Text()); m != nil {
			r.signin = m[1]
		}
	}
	if r.base == "" || r.signin == "" {
		t.Fatal("the runner never printed its API and console lines")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return r
}

// call sends one API request and returns the status and body.
func (r *runner) call(method, path, token, key, body string) (int, string) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.base+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// order creates an order as dev-user and returns its id.
func (r *runner) order(key, customer, sku string) string {
	r.t.Helper()
	body, _ := json.Marshal(map[string]any{"customer_id": customer, "currency": "RUB",
		"items": []map[string]any{{"sku": sku, "quantity": 1, "unit_price_minor": 500}}})
	status, out := r.call("POST", "/orders", "dev-user", key, string(body))
	var o struct{ ID string }
	if err := json.Unmarshal([]byte(out), &o); err != nil || status != http.StatusCreated {
		r.t.Fatalf("POST /orders: %d %s", status, out)
	}
	return o.ID
}

// browser starts a fresh headless chromium.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := os.Getenv("CHROMIUM_PATH")
	if path == "" {
		var err error
		if path, err = exec.LookPath("chromium"); err != nil {
			t.Skip("chromium is not installed (Debian: apt-get install chromium; or set CHROMIUM_PATH): the browser tests cannot run")
		}
	}
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1100, 760)}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 150*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}

// open navigates and returns the document's HTTP status.
func open(t *testing.T, ctx context.Context, url string) int64 {
	t.Helper()
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("navigate %s: %v", url, err)
	}
	return resp.Status
}

// submit clicks a button that submits a form and waits for the next page.
func submit(t *testing.T, ctx context.Context, sel string) int64 {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("submit %s: %v", sel, err)
	}
	return resp.Status
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func body(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// until reloads url until cond holds on its body text, for up to d.
func until(t *testing.T, ctx context.Context, url string, d time.Duration, what string, cond func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		open(t, ctx, url)
		b := body(t, ctx)
		if cond(b) {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s; the page at %s shows:\n%s", d, what, url, b)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// shot saves a PNG screenshot into $CONSOLETEST_SCREENSHOTS, if set.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("CONSOLETEST_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if len(png) > 150<<10 {
		t.Errorf("screenshot %s is %d bytes, want < 150 KB", name, len(png))
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleInABrowser is the operator's path through the console: access
// control, finding an order and reading its timeline, a hostile customer
// id, a dead letter made by a local fault redriven until its order
// confirms, a discard seen in the audit log, and stock.
func TestConsoleInABrowser(t *testing.T) {
	ctx := browser(t)
	r := startRunner(t)
	var dialogs atomic.Int32
	if err := chromedp.Listen(ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}

	hostile := "<script>alert(1)</script>\u202egnp.exe"
	ok := r.order("ct-ok", hostile, "sku-1")
	stuck := r.order("ct-stuck", "c-5", "sku-5")
	unpublished := r.order("ct-outbox", "c-4", "sku-4")
	// A customer with more orders than a page holds, the first of them
	// behind 21 newer ones.
	var many []string // oldest first
	for i := range 22 {
		many = append(many, r.order(fmt.Sprintf("ct-many-%d", i), "ct-many", "sku-1"))
	}

	t.Run("no page and no data without an admin", func(t *testing.T) {
		for _, path := range []string{"/admin/console", "/admin/console/dlq?status=open", "/admin/console/orders/" + ok} {
			if got := open(t, ctx, r.base+path); got != http.StatusUnauthorized {
				t.Errorf("anonymous %s: status %d, want 401", path, got)
			}
			if b := body(t, ctx); strings.Contains(b, ok) || strings.Contains(b, "Overview") || !strings.Contains(b, "Sign in") {
				t.Errorf("anonymous %s shows more than the sign-in form:\n%s", path, b)
			}
		}
		if got := open(t, ctx, r.base+"/admin/console/signin?token=dev-user"); got != http.StatusForbidden {
			t.Errorf("a user token signs in: status %d, want 403", got)
		}
		if b := body(t, ctx); !strings.Contains(b, "needs an admin identity") {
			t.Errorf("the user sign-in page says:\n%s", b)
		}
		if got := open(t, ctx, r.base+"/admin/console"); got != http.StatusUnauthorized {
			t.Errorf("after a user sign-in: status %d, want 401 (no session)", got)
		}
		// The admin API refuses the same callers.
		for _, tok := range []string{"", "dev-user"} {
			if status, _ := r.call("GET", "/admin/dlq", tok, "", ""); status != 401 && status != 403 {
				t.Errorf("GET /admin/dlq with token %q: %d", tok, status)
			}
		}
	})

	t.Run("sign in", func(t *testing.T) {
		if !strings.Contains(r.signin, "/admin/console/signin?token=") {
			t.Fatalf("printed console link %q", r.signin)
		}
		if got := open(t, ctx, r.signin); got != http.StatusOK {
			t.Fatalf("admin sign-in: status %d", got)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil || strings.Contains(loc, "token") {
			t.Errorf("after sign-in the address is %q (%v), want the token gone", loc, err)
		}
		if got := text(t, ctx, "#whoami"); got != "dev-admin" {
			t.Errorf("signed in as %q", got)
		}
	})

	t.Run("find an order and read its timeline", func(t *testing.T) {
		b := until(t, ctx, r.base+"/admin/console/orders/"+ok, 20*time.Second, "the order is not CONFIRMED",
			func(b string) bool { return strings.Contains(b, "CONFIRMED") })
		for _, want := range []string{"create_order", "reserve_inventory", "process_payment", "confirm_order", "forward", "succeeded", "idempotency key ct-ok"} {
			if !strings.Contains(b, want) {
				t.Errorf("the timeline lacks %q", want)
			}
		}
		// By idempotency key and caller, through the search form.
		open(t, ctx, r.base+"/admin/console/orders")
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#find-key input[name=key]`), "ct-ok"),
			chromedp.SendKeys(chromedp.CSS(`#find-key input[name=caller]`), "dev-user")); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, "#find-key button")
		if got := text(t, ctx, "#order-id"); got != ok {
			t.Errorf("the key search found %q, want %s", got, ok)
		}
		shot(t, ctx, "order-timeline")
	})

	t.Run("find an order by customer, paging to the older ones", func(t *testing.T) {
		open(t, ctx, r.base+"/admin/console/orders")
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#find-customer input[name=customer]`), "ct-many")); err != nil {
			t.Fatal(err)
		}
		if got := submit(t, ctx, "#find-customer button"); got != http.StatusOK {
			t.Fatalf("the customer search: status %d", got)
		}
		listed := func() []string {
			ids, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](
				`Array.from(document.querySelectorAll('#customer-orders a')).map(a => a.textContent)`))
			if err != nil {
				t.Fatal(err)
			}
			return ids
		}
		first := listed()
		if len(first) != 20 || first[0] != many[21] || slices.Contains(first, many[0]) {
			t.Fatalf("the first page lists %d orders starting %v, want the newest 20 starting %s, without the oldest",
				len(first), first[:min(1, len(first))], many[21])
		}
		if got := submit(t, ctx, "#older"); got != http.StatusOK {
			t.Fatalf("the older page: status %d", got)
		}
		older := listed()
		if len(older) != 2 || older[0] != many[1] || older[1] != many[0] {
			t.Errorf("the older page lists %v, want %s then %s", older, many[1], many[0])
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#older').length + 2 * document.querySelectorAll('#newest').length`))
		if err != nil || n != 2 {
			t.Errorf("the last page has links %d (%v), want only Newest", n, err)
		}
		shot(t, ctx, "orders-by-customer")
		if got := submit(t, ctx, "#customer-orders a[href$='"+many[0]+"']"); got != http.StatusOK {
			t.Fatalf("opening the oldest order: status %d", got)
		}
		if got := text(t, ctx, "#order-id"); got != many[0] {
			t.Errorf("opened %q, want the customer's first order %s", got, many[0])
		}
	})

	t.Run("a hostile customer id renders as text", func(t *testing.T) {
		open(t, ctx, r.base+"/admin/console/orders/"+ok)
		if got, want := text(t, ctx, "#customer"), "<script>alert(1)</script>⟨U+202E⟩gnp.exe"; got != want {
			t.Errorf("customer shown as %q, want %q", got, want)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.scripts.length`))
		if err != nil || n != 0 {
			t.Errorf("the page has %d script elements (%v), want none", n, err)
		}
		open(t, ctx, r.base+"/admin/console/orders?customer="+strings.NewReplacer("<", "%3C", ">", "%3E", "(", "%28", ")", "%29", "/", "%2F").Replace(hostile))
		if b := body(t, ctx); !strings.Contains(b, ok) {
			t.Errorf("the customer search does not list the order:\n%s", b)
		}
		if dialogs.Load() != 0 {
			t.Errorf("a script ran: %d dialogs opened", dialogs.Load())
		}
	})

	t.Run("redrive a dead letter and see the order confirm", func(t *testing.T) {
		list := r.base + "/admin/console/dlq?status=open&source=queue&order_id=" + stuck
		until(t, ctx, list, 60*time.Second, "no open queue dead letter for the sku-5 order",
			func(b string) bool { return strings.Contains(b, "max_receives_exceeded") })
		// The overview groups the open entries by source and error type
		// (the outbox one of the sku-4 order may still be on its way).
		b := until(t, ctx, r.base+"/admin/console", 20*time.Second, "the overview shows no open queue dead letter",
			func(b string) bool { return strings.Contains(b, "queue\tmax_receives_exceeded") })
		for wait := time.Now().Add(10 * time.Second); !strings.Contains(b, "All 2 open") && time.Now().Before(wait); {
			time.Sleep(500 * time.Millisecond)
			open(t, ctx, r.base+"/admin/console")
			b = body(t, ctx)
		}
		shot(t, ctx, "overview")
		open(t, ctx, list)
		// The filter form carries every filter the admin API has.
		for _, f := range []string{"source", "status", "error_type", "order_id", "saga_id", "from", "to", "flagged", "limit"} {
			if _, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`#filters [name=`+f+`]`))); err != nil {
				t.Errorf("no %s filter: %v", f, err)
			}
		}
		if got, want := text(t, ctx, "h2.group"), "max_receives_exceeded"; !strings.HasPrefix(got, want) {
			t.Errorf("the entries are grouped under %q, want %q", got, want)
		}
		shot(t, ctx, "dead-letters")
		if _, out := r.call("GET", "/orders/"+stuck, "dev-user", "", ""); !strings.Contains(out, `"status":"PENDING"`) {
			t.Fatalf("the stuck order before the redrive: %s", out)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](
			`document.querySelectorAll('#select-form input[name=ids]').forEach(c => c.checked = true), 0`)); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, "#dry-run-selected")
		if s := text(t, ctx, "#summary"); !strings.HasPrefix(s, "Dry run:") || strings.Contains(s, ": 0 of") {
			t.Fatalf("dry run summary %q", s)
		}
		if status, out := r.call("GET", "/orders/"+stuck, "dev-user", "", ""); status != 200 || strings.Contains(out, "CONFIRMED") {
			t.Fatalf("the dry run changed the order: %d %s", status, out)
		}
		// Fix the cause, then confirm.
		if status, out := r.call("PATCH", "/_faults", "", "", `{"advancer_sku":""}`); status != 200 {
			t.Fatalf("PATCH /_faults: %d %s", status, out)
		}
		submit(t, ctx, "#confirm")
		if s := text(t, ctx, "#summary"); !strings.HasPrefix(s, "Redriven ") || strings.HasPrefix(s, "Redriven 0") {
			t.Fatalf("redrive summary %q", s)
		}
		submit(t, ctx, "#progress-link")
		if b := body(t, ctx); !strings.Contains(b, stuck) {
			t.Errorf("the progress page does not link the order:\n%s", b)
		}
		until(t, ctx, r.base+"/admin/console/orders/"+stuck, 30*time.Second, "the redriven order is not CONFIRMED",
			func(b string) bool { return strings.Contains(b, "CONFIRMED") })
	})

	t.Run("discard with a reason and find it in the audit log", func(t *testing.T) {
		list := r.base + "/admin/console/dlq?status=open&source=outbox&order_id=" + unpublished
		until(t, ctx, list, 60*time.Second, "no open outbox dead letter for the sku-4 order",
			func(b string) bool { return strings.Contains(b, "LOCAL_FAULT_PUBLISH_SKU") })
		submit(t, ctx, "a.dl")
		reason := fmt.Sprintf("console test: not worth a redrive %d", time.Now().UnixNano()%1000)
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#discard-reason"), reason)); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, "#discard")
		if s := text(t, ctx, "#summary"); !strings.HasPrefix(s, "Discarded 1") {
			t.Fatalf("discard summary %q", s)
		}
		open(t, ctx, r.base+"/admin/console/audit")
		b := text(t, ctx, "#audit")
		for _, want := range []string{reason, "discard", "dev-admin", "redrive"} {
			if !strings.Contains(b, want) {
				t.Errorf("the audit log lacks %q", want)
			}
		}
		shot(t, ctx, "audit-log")
	})

	t.Run("overview and stock", func(t *testing.T) {
		open(t, ctx, r.base+"/admin/console")
		b := body(t, ctx)
		for _, want := range []string{"completed", "breaker: payment", "outbox backlog"} {
			if !strings.Contains(b, want) {
				t.Errorf("the overview lacks %q", want)
			}
		}
		// Fast: the overview's document is small and paints at once.
		size, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.outerHTML.length`))
		if err != nil || size > 100<<10 {
			t.Errorf("the overview is %d bytes (%v), want < 100 KB", size, err)
		}
		// The page is loaded (its stylesheet included) when the browser can
		// paint it: paint timing is not recorded headless, load is.
		load, err := chromedp.Run(ctx, chromedp.Evaluate[float64](
			`performance.getEntriesByType('navigation')[0].loadEventEnd`))
		if err != nil || load <= 0 {
			t.Errorf("no load time measured: %v", err)
		}
		t.Logf("overview: %d bytes, loaded %.0f ms after the navigation started", size, load)
		if load > 500 {
			t.Errorf("the overview loaded after %.0f ms, want under 500 ms (about 70 ms on an idle machine)", load)
		}
		open(t, ctx, r.base+"/admin/console/stock")
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(`#set-stock input[name=sku]`), "sku-3"),
			chromedp.SendKeys(chromedp.CSS(`#set-stock input[name=available]`), "42")); err != nil {
			t.Fatal(err)
		}
		submit(t, ctx, "#set-stock button")
		if b := text(t, ctx, "#stock"); !regexp.MustCompile(`sku-3\s+42\b`).MatchString(b) {
			t.Errorf("stock after setting sku-3 to 42:\n%s", b)
		}
		if _, out := r.call("GET", "/admin/audit?limit=1", "dev-admin", "", ""); !strings.Contains(out, `"actor":"dev-admin"`) {
			t.Errorf("the stock change is not audited with the caller: %s", out)
		}
	})

	t.Run("sign out", func(t *testing.T) {
		open(t, ctx, r.base+"/admin/console")
		submit(t, ctx, ".signout button")
		if got := open(t, ctx, r.base+"/admin/console"); got != http.StatusUnauthorized {
			t.Errorf("after sign-out: status %d, want 401", got)
		}
	})
}

package main

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// price is one published Yandex Cloud price, or none (NaN) where the stored
// documentation does not publish a number. Every number here is quoted from
// the page named in source, never estimated; docs/bench.md lists them with
// their dates.
type price struct {
	rub    float64 // ₽ per unit, VAT included; NaN: not published
	unit   string
	source string
}

var nan = math.NaN()

var prices = map[string]price{
	// ru/_pricing/functions/rub-invocations.md (yandex-cloud/docs, commit
	// 678289c8), included by functions/pricing.md: "Вызов функций, свыше
	// 1 млн в месяц … С 13 апреля 2022: 16 ₽" per 1 million invocations.
	"functions.invocation": {16.0 / 1e6, "invocation", "yandex-cloud/docs ru/_pricing/functions/rub-invocations.md (from 13 Apr 2022)"},
	// ru/_pricing/functions/rub-compute.md: the GB×hour price is a SKU
	// template ({{ sku|RUB|serverless.functions.compute.v1 }}), not a number.
	"functions.gbhour": {nan, "GB×hour", "yandex-cloud/docs ru/_pricing/functions/rub-compute.md (SKU placeholder, no number)"},
	// ru/_pricing/message-queue/rub.md (commit 678289c8): "Запросы к
	// стандартным очередям … С 13 апреля 2022: 48,76 ₽" per 1 million
	// requests; the first 100 000 requests a month are free.
	"mq.request": {48.76 / 1e6, "request", "yandex-cloud/docs ru/_pricing/message-queue/rub.md (from 13 Apr 2022)"},
	// ru/_pricing/ydb/rub-serverless.md: the price per 1 million RU is a SKU
	// template; how many RU a transaction costs depends on rows and sizes
	// (ydb/pricing/ru-yql.md) and is not measured here.
	"ydb.ru": {nan, "RU", "yandex-cloud/docs ru/_pricing/ydb/rub-serverless.md (SKU placeholder, no number)"},
	// Yandex Workflows (Serverless Integrations): no pricing page with a
	// per-step price among the stored documentation.
	"workflows.step": {nan, "step", "no Workflows price in the stored docs (serverless-integrations pricing not found)"},
}

// ydbTripsPerOrder, when set (by scripts/bench/ydbtrips.go, the YDB
// round-trip recorder), returns YDB round trips per confirmed order and
// what they were measured on. Unset, the cost model counts store
// transactions instead and says so.
var ydbTripsPerOrder func() (trips float64, source string, ok bool)

// costRows turns the burst's per-order counts into ₽ per 1 000 000
// confirmed orders, with each part's price and source; a part without a
// published price prints n/a and the total says what it leaves out.
func costRows(r burstResult) []row {
	const million = 1e6
	inv := r.apiInv + r.advInv
	// Only the sends are billed: the trigger's own receives and deletes are
	// free ("When the trigger is running, requests to the message queue are
	// free of charge", yandex-cloud/docs en/functions/concepts/trigger/
	// ymq-trigger.md). In the burst every receive and delete is the trigger's.
	mqReq := r.sends
	part := func(what string, perOrder float64, p price) row {
		cost := "n/a (price not published in the stored docs)"
		if !math.IsNaN(p.rub) {
			cost = fmt.Sprintf("%.0f ₽", perOrder*million*p.rub)
		}
		return row{what, fmt.Sprintf("%.3f %s / confirmed order", perOrder, p.unit), cost + " per 1 000 000 orders", p.source}
	}
	var known float64
	var unknown []string
	add := func(perOrder float64, p price, name string) {
		if math.IsNaN(p.rub) {
			unknown = append(unknown, name)
			return
		}
		known += perOrder * million * p.rub
	}
	add(inv, prices["functions.invocation"], "")
	add(mqReq, prices["mq.request"], "")
	add(r.gbSecPerOrder/3600, prices["functions.gbhour"], "GB·s")
	trips, tripSrc, haveTrips := 0.0, "", false
	if ydbTripsPerOrder != nil {
		trips, tripSrc, haveTrips = ydbTripsPerOrder()
	}
	add(0, prices["ydb.ru"], "YDB RU")
	rows := []row{
		part("cost: function invocations (orderapi + sagaadvancer)", inv, prices["functions.invocation"]),
		{fmt.Sprintf("cost: function GB·s (100 ms rounding; orderapi %v MB, sagaadvancer %v MB)", r.memMB["orderapi"], r.memMB["sagaadvancer"]),
			fmt.Sprintf("%.4f GB·s / confirmed order (%.1f GB·hour per 1 000 000)", r.gbSecPerOrder, r.gbSecPerOrder*million/3600),
			"n/a (GB×hour price not published in the stored docs)", prices["functions.gbhour"].source},
		part(fmt.Sprintf("cost: Message Queue requests billed: %.2f SendMessageBatch (%.2f messages); the trigger's %.2f receive + %.2f delete are free", r.sends, r.sent, r.receives, r.deletes),
			mqReq, prices["mq.request"]),
	}
	if haveTrips {
		rows = append(rows, row{"cost: YDB requests (round trips)", fmt.Sprintf("%.0f / confirmed order (%s)", trips, tripSrc),
			"n/a: RU price not published in the stored docs, RU per request not measured", prices["ydb.ru"].source})
	} else {
		rows = append(rows, row{"cost: YDB requests (round-trip recorder failed; see stderr)", "—", "n/a", prices["ydb.ru"].source})
	}
	rows = append(rows, row{"cost: store transactions in the burst (SQLite; InTx + View, timers included)", fmt.Sprintf("%.2f / confirmed order", r.tx),
		"—", "counted by the store's transaction hook"})
	rows = append(rows,
		row{"cost: timers (outboxrelay, sagarecovery; per minute in the cloud, not per order)", fmt.Sprintf("%.3f local invocations / order", r.timerInv),
			"2 × 43 200 invocations a month: " + fmt.Sprintf("%.0f ₽", 2*43200*prices["functions.invocation"].rub) + " + GB·s", prices["functions.invocation"].source},
		row{"cost: ordersaga per 1 000 000 confirmed orders (published parts)", fmt.Sprintf("%.0f ₽", known),
			"without: " + strings.Join(unknown, ", "), "free tiers not subtracted"},
		row{"cost: the same 4-step saga as a Yandex Workflows workflow", "4 steps + 1 API call / order",
			fmt.Sprintf("n/a per step; the API invocation alone %.0f ₽", million*prices["functions.invocation"].rub), prices["workflows.step"].source},
	)
	return rows
}

// target is one measured target of the end-to-end bench.
type target struct {
	name   string
	before string // the baseline run's figure (docs/bench.md)
	after  float64
	ok     bool
	unit   string
}

// before are the numbers of the run recorded in docs/bench.md as "before"
// (main at 7351602, 2 shared cores): one string per target.
var before = map[string]string{
	"final/POST":          "0.14",
	"p99":                 "7.06 s",
	"messages/order":      "6.00",
	"advancer inv/order":  "0.40",
	"relay/raw":           "0.28",
	"POST/single-row tx":  "0.03",
	"cold start":          "64 ms",
	"peak memory per inv": "25.9 MB",
}

// targetRows judges the targets on this run's rows (and on the
// burst, when it ran).
func targetRows(r *burstResult, rows []row) []row {
	var ts []target
	if r != nil {
		ts = append(ts,
			target{"final/POST", before["final/POST"], r.finalRate / r.postRate, r.finalRate >= 0.5*r.postRate, "≥ 0.5"},
			target{"p99", before["p99"], r.p99.Seconds(), r.p99.Seconds() < 1, "< 1 s"},
			target{"messages/order", before["messages/order"], r.sent, r.sent <= 3, "≤ 3"},
			target{"advancer inv/order", before["advancer inv/order"], r.advInv, r.advInv <= 1, "≤ 1"})
	}
	if v, ok := ratioOf(rows, "outbox relay"); ok {
		ts = append(ts, target{"relay/raw", before["relay/raw"], v, v >= 0.8, "≥ 0.8"})
	}
	if v, ok := ratioOf(rows, "POST /orders over loopback"); ok {
		ts = append(ts, target{"POST/single-row tx", before["POST/single-row tx"], v, v >= 0.1, "≥ 0.1"})
	}
	worstCold, worstMem := 0.0, 0.0
	for _, rw := range rows {
		if strings.Contains(rw.what, "cold start") {
			worstCold = math.Max(worstCold, leadingNumber(rw.value))
		}
		if strings.Contains(rw.what, "peak memory") {
			worstMem = math.Max(worstMem, leadingNumber(rw.value))
		}
	}
	if worstCold > 0 {
		ts = append(ts, target{"cold start", before["cold start"], worstCold, worstCold < 50, "< 50 ms (slowest function)"})
	}
	if worstMem > 0 {
		ts = append(ts, target{"peak memory per inv", before["peak memory per inv"], worstMem, worstMem < 64, "< 64 MB (largest)"})
	}
	var out []row
	for _, t := range ts {
		verdict := "FAIL"
		if t.ok {
			verdict = "PASS"
		}
		out = append(out, row{"target " + t.name + " " + t.unit, fmt.Sprintf("%.3f (this run)", t.after), "before: " + t.before, verdict})
	}
	return out
}

// ratioOf finds the ratio column of the first row whose name starts with prefix.
func ratioOf(rows []row, prefix string) (float64, bool) {
	for _, r := range rows {
		if strings.HasPrefix(r.what, prefix) {
			v, err := strconv.ParseFloat(r.ratio, 64)
			return v, err == nil
		}
	}
	return 0, false
}

var numRE = regexp.MustCompile(`^[0-9.]+`)

func leadingNumber(s string) float64 {
	v, _ := strconv.ParseFloat(numRE.FindString(s), 64)
	return v
}

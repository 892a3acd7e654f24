package chaos

import (
	"bytes"
	"encoding/json"
	"strings"

	"ordersaga/shared/domain/order"
)

// unicodeShare is the share of requests a Unicode run fills with random
// Unicode (the rest stay plain, so most sagas still run their full course).
const unicodeShare = 0.35

// unicodePieces are the kinds of text a Unicode run mixes in. Each is what
// some adapter treats specially: the queue (as SQS) refuses noncharacters
// U+FFFE/U+FFFF and anything outside #x9 #xA #xD #x20–#xD7FF #xE000–#xFFFD
// #x10000–#x10FFFF; JSON parsers differ on invalid UTF-8; bidirectional
// overrides, joiners and combining marks change how text is cut and shown.
var unicodePieces = []string{
	"\uFFFE", "\uFFFF", "\uFDD0", "\U0010FFFF", "\U0001FFFE", // noncharacters
	"\xed\xa0\x80", "\xff", "\xc3", // a lone surrogate's UTF-8 bytes, invalid bytes, a cut sequence
	"שלום", "مرحبا", "\u202Eevil\u202C", "\u200F", // right-to-left text, an override, a mark
	"😀", "👩\u200D💻", "🇷🇺", "\U0001F9D1\U0001F3FD", // emoji, a ZWJ sequence, a flag, a modifier
	"e\u0301", "\u0301", "Z\u0351\u0360\u035B", // combining marks (one leading)
	"\u00A0", "\u2028", "\uFEFF", "\u200B", // no-break space, line separator, BOM, zero width
	"Ωmega", "漢字", "ё", "\uE000", // plain non-ASCII, private use
	"\x7f", "\u0085", "\t", // controls the API refuses
}

// randomText draws 1–4 pieces, optionally around a plain prefix.
func (w *world) randomText(prefix string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for n := 1 + w.wl.IntN(4); n > 0; n-- {
		b.WriteString(unicodePieces[w.wl.IntN(len(unicodePieces))])
	}
	return b.String()
}

// rawMark stands for a field's value in the encoded body until the raw
// bytes replace it (json.Marshal would turn invalid UTF-8 into U+FFFD).
const rawMark = "\x00chaos-raw-%d\x00"

// unicodeRequest fills some of the text fields of req with random Unicode:
// the Idempotency-Key (kept unique by its plain prefix), customer_id, and
// now and then the currency or a SKU. The body carries the raw bytes, not
// json.Marshal's sanitised version; the returned request is what
// encoding/json reads from that body (a conforming parser), which is what
// the API must store if it accepts the request.
func (w *world) unicodeRequest(key string, req order.Request) (string, []byte, order.Request) {
	if w.wl.Float64() < 0.6 {
		key = w.randomText(key + "-")
	}
	raw := map[string]string{}
	field := func(v string) string {
		m := strings.ReplaceAll(rawMark, "%d", string(rune('a'+len(raw))))
		raw[m] = v
		return m
	}
	alt := req
	alt.Items = append([]order.Item(nil), req.Items...)
	alt.CustomerID = field(w.randomText("cust-"))
	if w.wl.Float64() < 0.1 {
		alt.Currency = field(w.randomText(""))
	}
	if w.wl.Float64() < 0.1 {
		alt.Items[0].SKU = field(w.randomText(alt.Items[0].SKU))
	}
	body, err := json.Marshal(alt)
	if err != nil { // a request of strings and numbers always encodes
		panic(err)
	}
	for m, v := range raw {
		enc, _ := json.Marshal(m)
		body = bytes.Replace(body, enc, []byte(`"`+escapeRaw(v)+`"`), 1)
	}
	var read order.Request
	if err := json.Unmarshal(body, &read); err != nil {
		panic(err) // the body is well-formed JSON apart from its bytes
	}
	return key, body, read
}

// escapeRaw writes s as the inside of a JSON string, escaping what JSON
// requires but leaving every other byte (valid or not) as it is.
func escapeRaw(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

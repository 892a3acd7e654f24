package redrive

import (
	"encoding/json"
	"reflect"
	"testing"

	"ordersaga/shared/domain/apperr"
)

// FuzzDecodeCommand checks that no input panics, that every refusal is a
// classified error, and that an accepted command re-encodes to JSON that
// decodes to the same command.
func FuzzDecodeCommand(f *testing.F) {
	for _, seed := range []string{
		`{"action":"stats"}`,
		`{"action":"list","source":"queue","filter":{"status":"open","error_type":"transient","order_id":"o-1","saga_id":"s-1","from":"2026-03-01T00:00:00Z","to":"2026-03-02T00:00:00Z","flagged":false},"cursor":"abc","limit":10}`,
		`{"action":"show","ids":["dl-1"]}`,
		`{"action":"redrive","actor":"ops","ids":["a","b"],"max":2,"rate_per_sec":0.5,"dry_run":true,"force":true}`,
		`{"action":"redrive","actor":"ops","source":"saga","all":true}`,
		`{"action":"discard","actor":"ops","ids":["a"],"reason":"why"}`,
		`{"action":"purge","actor":"ops","older_than":"720h","max":5}`,
		`{"action":"ingest","actor":"ops","max":10}`,
		`{"action":"redrive","max":1e308}`,
		`{"action":"list","action":"list"}`,
		`{"action":"list","filter":{"flagged":null}}`,
		`[[[[`,
		`{"ids":[1,2,3]}`,
		`{"action":"list"}{}`,
		"{\"action\":\"redrive\",\"actor\":\"\xff\",\"all\":true}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cmd, err := DecodeCommand(raw)
		if err != nil {
			if k := apperr.KindOf(err); k != apperr.Invalid && k != apperr.TooLarge {
				t.Fatalf("refusal of kind %v: %v", k, err)
			}
			return
		}
		enc, err := json.Marshal(cmd)
		if err != nil {
			t.Fatalf("accepted command does not encode: %v", err)
		}
		again, err := DecodeCommand(enc)
		if err != nil {
			t.Fatalf("re-encoded command %s refused: %v %v", enc, err, apperr.Fields(err))
		}
		if !reflect.DeepEqual(cmd, again) {
			t.Fatalf("round trip changed the command:\n%+v\n%+v", cmd, again)
		}
	})
}

// Command pluginhost loads one function plugin the way the Cloud Functions Go
// runtime does and calls it once (used by `go run ./scripts/package -verify`):
//
//	pluginhost -plugin function.so -event event.json
//
// It opens the plugin (plugin.Open), looks up Handler, checks that its
// signature is one the runtime accepts (platform-notes §1.3, from
// functions/lang/golang/handler.md: optional context.Context, optional
// request — []byte, string, or a JSON-decoded custom type or pointer —, an
// optional response and a mandatory trailing error; or the standard
// func(http.ResponseWriter, *http.Request) / http.Handler), decodes the event
// into the request type as the runtime does (json.Unmarshal for custom
// types), calls the handler once and prints one JSON line describing the
// outcome. With no cloud configured the call must end in the function's
// documented cold-start failure: a returned error (the runtime answers
// UserCodeError), or an HTTP response with status 503 (orderapi's
// ColdStartFailed). A panic, a success or a malformed signature exits 1.
//
// It imports the standard library only, so it depends on nothing the
// functions link, and it must be built by the very go command that built the
// plugin (plugin.Open refuses a plugin whose runtime differs).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"plugin"
	"reflect"
	"runtime/debug"
	"strings"
)

// outcome is what the host prints.
type outcome struct {
	Signature string          `json:"signature"`
	Style     string          `json:"style"` // "cloud-functions" or "http"
	Error     string          `json:"error,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
	Status    int             `json:"status,omitempty"`
	Panic     string          `json:"panic,omitempty"`
	ColdStart bool            `json:"cold_start_failure"`
	Problem   string          `json:"problem,omitempty"`
}

func main() {
	so := flag.String("plugin", "", "plugin (.so) to load")
	eventPath := flag.String("event", "", "JSON event file to call the handler with")
	flag.Parse()
	if *so == "" || *eventPath == "" {
		fmt.Fprintln(os.Stderr, "usage: pluginhost -plugin function.so -event event.json")
		os.Exit(2)
	}
	event, err := os.ReadFile(*eventPath)
	if err != nil {
		fail(outcome{Problem: err.Error()})
	}
	o := run(*so, event)
	if o.Problem != "" || o.Panic != "" || !o.ColdStart {
		fail(o)
	}
	emit(o)
}

func emit(o outcome) {
	b, _ := json.Marshal(o)
	fmt.Println(string(b))
}

func fail(o outcome) {
	if o.Problem == "" && o.Panic == "" && !o.ColdStart {
		o.Problem = "the call succeeded with no cloud configured; want the documented cold-start failure (an error, or an HTTP 503)"
	}
	emit(o)
	os.Exit(1)
}

var (
	ctxType  = reflect.TypeOf((*context.Context)(nil)).Elem()
	errType  = reflect.TypeOf((*error)(nil)).Elem()
	rwType   = reflect.TypeOf((*http.ResponseWriter)(nil)).Elem()
	reqType  = reflect.TypeOf((*http.Request)(nil))
	hdlrType = reflect.TypeOf((*http.Handler)(nil)).Elem()
)

// run loads the plugin and calls its Handler once.
func run(so string, event []byte) outcome {
	p, err := plugin.Open(so)
	if err != nil {
		return outcome{Problem: "plugin.Open: " + err.Error()}
	}
	sym, err := p.Lookup("Handler")
	if err != nil {
		return outcome{Problem: "Lookup(\"Handler\"): " + err.Error()}
	}
	v := reflect.ValueOf(sym)
	// A variable Handler is looked up as a pointer to it.
	if v.Kind() == reflect.Pointer && v.Elem().IsValid() && !v.Type().Implements(hdlrType) {
		v = v.Elem()
	}
	o := outcome{Signature: v.Type().String()}
	if v.Type().Implements(hdlrType) {
		o.Style = "http"
		return callHTTP(o, func(w http.ResponseWriter, r *http.Request) { sym.(http.Handler).ServeHTTP(w, r) }, event)
	}
	if v.Kind() != reflect.Func {
		o.Problem = "Handler is a " + v.Kind().String() + ", not a function"
		return o
	}
	t := v.Type()
	if t.NumIn() == 2 && t.In(0) == rwType && t.In(1) == reqType && t.NumOut() == 0 {
		o.Style = "http"
		f := v.Interface().(func(http.ResponseWriter, *http.Request))
		return callHTTP(o, f, event)
	}
	o.Style = "cloud-functions"
	if problem := checkSignature(t); problem != "" {
		o.Problem = problem
		return o
	}
	args := []reflect.Value{}
	in := 0
	if t.NumIn() > 0 && t.In(0) == ctxType {
		args = append(args, reflect.ValueOf(context.Background()))
		in = 1
	}
	if t.NumIn() > in {
		arg, err := decodeRequest(t.In(in), event)
		if err != nil {
			o.Problem = "decoding the event into " + t.In(in).String() + ": " + err.Error()
			return o
		}
		args = append(args, arg)
	}
	outs, panicked := call(v, args)
	if panicked != "" {
		o.Panic = panicked
		return o
	}
	if e := outs[len(outs)-1]; !e.IsNil() {
		o.Error = e.Interface().(error).Error()
		o.ColdStart = true
		return o
	}
	if len(outs) == 2 {
		b, err := json.Marshal(outs[0].Interface())
		if err != nil {
			o.Problem = "response is not JSON-serialisable: " + err.Error()
			return o
		}
		o.Response = b
		var resp struct {
			StatusCode int `json:"statusCode"`
		}
		if json.Unmarshal(b, &resp) == nil && resp.StatusCode != 0 {
			o.Status = resp.StatusCode
			o.ColdStart = resp.StatusCode == http.StatusServiceUnavailable
		}
	}
	return o
}

// checkSignature returns why t is not a Cloud Functions style handler, or "".
func checkSignature(t reflect.Type) string {
	if t.IsVariadic() {
		return "Handler is variadic"
	}
	in := 0
	if t.NumIn() > 0 && t.In(0) == ctxType {
		in = 1
	}
	if t.NumIn()-in > 1 {
		return fmt.Sprintf("Handler takes %d parameters: at most a context.Context and one request", t.NumIn())
	}
	if t.NumIn() > in && t.In(in).Implements(ctxType) {
		return "Handler's request is a context.Context: the context must come first"
	}
	if t.NumOut() < 1 || t.NumOut() > 2 || t.Out(t.NumOut()-1) != errType {
		return "Handler must return (error) or (response, error)"
	}
	return ""
}

// decodeRequest converts the event into a request of type t as the runtime
// does: []byte and string verbatim, anything else json.Unmarshal-ed.
func decodeRequest(t reflect.Type, event []byte) (reflect.Value, error) {
	switch {
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		return reflect.ValueOf(event).Convert(t), nil
	case t.Kind() == reflect.String:
		return reflect.ValueOf(string(event)).Convert(t), nil
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		return p, json.Unmarshal(event, p.Interface())
	default:
		p := reflect.New(t)
		return p.Elem(), json.Unmarshal(event, p.Interface())
	}
}

// call calls f, turning a panic into its message and stack.
func call(f reflect.Value, args []reflect.Value) (outs []reflect.Value, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	return f.Call(args), ""
}

// callHTTP calls a standard Go handler with the event's method and body.
func callHTTP(o outcome, f func(http.ResponseWriter, *http.Request), event []byte) outcome {
	var ev struct {
		HTTPMethod string `json:"httpMethod"`
		Path       string `json:"path"`
		Body       string `json:"body"`
	}
	_ = json.Unmarshal(event, &ev)
	if ev.HTTPMethod == "" {
		ev.HTTPMethod = http.MethodPost
	}
	if ev.Path == "" {
		ev.Path = "/"
	}
	rec := httptest.NewRecorder()
	r := httptest.NewRequest(ev.HTTPMethod, ev.Path, strings.NewReader(ev.Body))
	func() {
		defer func() {
			if p := recover(); p != nil {
				o.Panic = fmt.Sprintf("%v\n%s", p, debug.Stack())
			}
		}()
		f(rec, r)
	}()
	o.Status = rec.Code
	o.ColdStart = rec.Code == http.StatusServiceUnavailable
	if o.Status >= 500 && !o.ColdStart {
		o.Error = rec.Body.String()
	}
	return o
}

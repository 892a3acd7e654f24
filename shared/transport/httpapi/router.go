package httpapi

import (
	"net/http"
	"strings"
)

// Router matches "METHOD /path/{param}" patterns. It exists instead of
// http.ServeMux patterns because a Cloud Functions plugin shares the host
// binary's GODEBUG settings, and httpmuxgo121=1 there would silently turn
// method patterns into literal paths. Path parameters are exposed through
// Request.PathValue, as with ServeMux.
type Router struct {
	routes []route
}

type route struct {
	method   string
	pattern  string
	segments []string
	h        http.Handler
}

// Handle registers h for pattern "METHOD /a/{b}/c". A segment "{name...}"
// at the end matches the rest of the path.
func (rt *Router) Handle(pattern string, h http.Handler) {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok || !strings.HasPrefix(path, "/") {
		panic("httpapi: bad route pattern " + pattern)
	}
	rt.routes = append(rt.routes, route{method: method, pattern: pattern, segments: split(path), h: h})
}

// HandleFunc registers a handler function.
func (rt *Router) HandleFunc(pattern string, f http.HandlerFunc) { rt.Handle(pattern, f) }

func split(path string) []string {
	return strings.Split(strings.Trim(path, "/"), "/")
}

// Match returns the handler and pattern for r, setting its path values.
// allowed lists the methods registered for the path when only the method
// differs (for 405 responses).
func (rt *Router) Match(r *http.Request) (h http.Handler, pattern string, allowed []string) {
	segs := split(r.URL.Path)
	for _, ro := range rt.routes {
		vals, ok := matchSegments(ro.segments, segs)
		if !ok {
			continue
		}
		if ro.method != r.Method {
			allowed = append(allowed, ro.method)
			continue
		}
		for k, v := range vals {
			r.SetPathValue(k, v)
		}
		return ro.h, ro.pattern, nil
	}
	return nil, "", allowed
}

func matchSegments(pattern, path []string) (map[string]string, bool) {
	var vals map[string]string
	for i, p := range pattern {
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "...}") {
			if vals == nil {
				vals = map[string]string{}
			}
			vals[strings.TrimSuffix(p[1:], "...}")] = strings.Join(path[i:], "/")
			return vals, true
		}
		if i >= len(path) {
			return nil, false
		}
		if strings.HasPrefix(p, "{") && strings.HasSuffix(p, "}") {
			if path[i] == "" {
				return nil, false
			}
			if vals == nil {
				vals = map[string]string{}
			}
			vals[p[1:len(p)-1]] = path[i]
			continue
		}
		if p != path[i] {
			return nil, false
		}
	}
	return vals, len(path) == len(pattern)
}

package ycmetrics

import (
	"cmp"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"ordersaga/shared/domain/metrics"
	"ordersaga/shared/kit/validate"
)

// DefaultEndpoint is the Monitoring write API.
const DefaultEndpoint = "https://monitoring.api.cloud.yandex.net/monitoring/v2/data/write"

// Defaults of Config.
const (
	DefaultTimeout   = 2 * time.Second
	DefaultMaxPoints = 2000
)

// maxLabelsPerMetric is Monitoring's limit, including cloudId, folderId and service.
const maxLabelsPerMetric = 16

// Config configures a Recorder.
type Config struct {
	// FolderID is the folder the metrics are written to (required).
	FolderID string
	// Function is the value of the common "function" label (e.g. "saga-advancer").
	Function string
	// Labels are further common labels (optional; keep them few and constant).
	Labels map[string]string
	// Tokens supplies the IAM token (required): InstanceServiceAccount() in the cloud.
	Tokens TokenSource
	// Endpoint is the write URL (default DefaultEndpoint).
	Endpoint string
	// Client sends the request (default: a client without its own timeout; Timeout bounds Flush).
	Client *http.Client
	// Timeout bounds one Flush: token plus POST (default DefaultTimeout).
	Timeout time.Duration
	// MaxPoints caps the points buffered between flushes (default DefaultMaxPoints).
	MaxPoints int
	// Now is the clock for point timestamps (default time.Now).
	Now func() time.Time
	// Log receives one warning per failed Flush (default: discarded).
	Log *slog.Logger
}

// seriesKey identifies a time series: a catalogued name and its label values.
type seriesKey struct {
	name string
	vals metrics.Values
}

// series is what one time series accumulated since the last Flush.
type series struct {
	def   *metrics.Def
	value float64 // counter: sum of increments; gauge: current value
	// histograms only
	count, sum, max float64
	buckets         []float64 // len(def.Buckets)+1, per bucket, not cumulative
}

// Recorder buffers metrics for one function instance and pushes them on
// Flush. Safe for concurrent use.
type Recorder struct {
	cfg      Config
	endpoint string // with the query string

	mu      sync.Mutex
	series  map[seriesKey]*series
	points  int // points the buffered series will produce
	unknown float64
	dropped map[string]float64
}

var _ metrics.Recorder = (*Recorder)(nil)

// New validates cfg, fills defaults and returns a Recorder. Errors: Invalid.
func New(cfg Config) (*Recorder, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	u, _ := url.Parse(cfg.Endpoint) // Validate parsed it
	q := u.Query()
	q.Set("folderId", cfg.FolderID)
	q.Set("service", "custom")
	u.RawQuery = q.Encode()
	return &Recorder{cfg: cfg, endpoint: u.String(), series: map[seriesKey]*series{}, dropped: map[string]float64{}}, nil
}

// Validate reports what New would refuse: no FolderID or Tokens, an
// Endpoint (when set) that is not an http(s) URL, more common labels than
// Monitoring allows per metric, or a negative Timeout or MaxPoints. Errors
// are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	p.Require(c.FolderID != "", "FolderID")
	p.Require(c.Tokens != nil, "Tokens")
	if c.Endpoint != "" {
		u, err := url.Parse(c.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			p.Add("Endpoint", "is not an http(s) URL (got %q)", c.Endpoint)
		}
	}
	common := len(c.Labels)
	if c.Function != "" {
		common++
	}
	if widest := 3 + common + maxCatalogLabels() + 1; widest > maxLabelsPerMetric { // +1: "bin"
		p.Add("Labels", "hold %d common labels, more than Monitoring's %d labels per metric allow", common, maxLabelsPerMetric)
	}
	validate.NotNegative(&p, "Timeout", c.Timeout)
	validate.NotNegative(&p, "MaxPoints", c.MaxPoints)
	return p.Err("ycmetrics")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.Endpoint = cmp.Or(c.Endpoint, DefaultEndpoint)
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	c.Timeout = cmp.Or(c.Timeout, DefaultTimeout)
	c.MaxPoints = cmp.Or(c.MaxPoints, DefaultMaxPoints)
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

func maxCatalogLabels() int {
	n := 0
	for _, d := range metrics.Catalog {
		n = max(n, len(d.Labels))
	}
	return n
}

// op is the Recorder method being applied.
type op uint8

const (
	opAdd op = iota
	opSet
	opObserve
)

// Add adds v (>= 0) to a Counter's increment, or adjusts a Gauge's value.
func (r *Recorder) Add(name string, v float64, labels ...string) { r.record(opAdd, name, v, labels) }

// Set sets a Gauge's value.
func (r *Recorder) Set(name string, v float64, labels ...string) { r.record(opSet, name, v, labels) }

// Observe records v in a Histogram.
func (r *Recorder) Observe(name string, v float64, labels ...string) {
	r.record(opObserve, name, v, labels)
}

// check returns why o with v cannot apply to a metric of d's kind ("" if it can).
func (o op) check(d *metrics.Def, v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return metrics.DropInvalidValue
	case o == opAdd && d.Kind == metrics.Counter && v < 0:
		return metrics.DropInvalidValue
	case o == opAdd && d.Kind == metrics.Histogram,
		o == opSet && d.Kind != metrics.Gauge,
		o == opObserve && d.Kind != metrics.Histogram:
		return metrics.DropKind
	}
	return ""
}

// record validates a call and applies it to its series under the lock.
func (r *Recorder) record(o op, name string, v float64, labels []string) {
	d, ok := metrics.Lookup(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if !ok {
		r.unknown++
		return
	}
	if reason := o.check(d, v); reason != "" {
		r.dropped[reason]++
		return
	}
	vals, reason := d.Resolve(labels)
	if reason != "" {
		r.dropped[reason]++
		return
	}
	key := seriesKey{name: name, vals: vals}
	s := r.series[key]
	bucket := 0
	if o == opObserve {
		bucket = bucketIndex(d.Buckets, v)
	}
	cost := 0
	switch {
	case s == nil && o == opObserve:
		cost = 4 // count, sum, max and the first bucket
	case s == nil:
		cost = 1
	case o == opObserve && s.buckets[bucket] == 0:
		cost = 1 // a bucket becomes non-empty
	}
	if r.points+cost > r.cfg.MaxPoints {
		r.dropped[metrics.DropOverflow]++
		return
	}
	if s == nil {
		s = &series{def: d}
		if o == opObserve {
			s.buckets = make([]float64, len(d.Buckets)+1)
		}
		r.series[key] = s
	}
	r.points += cost
	switch o {
	case opAdd:
		s.value += v
	case opSet:
		s.value = v
	case opObserve:
		if s.count == 0 || v > s.max {
			s.max = v
		}
		s.count++
		s.sum += v
		s.buckets[bucket]++
	}
}

// bucketIndex is the index of the first bound >= v, or len(bounds) (the overflow bucket).
func bucketIndex(bounds []float64, v float64) int {
	for i, b := range bounds {
		if v <= b {
			return i
		}
	}
	return len(bounds)
}

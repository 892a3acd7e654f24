// Package ymq is the queue port's adapter for Yandex Message Queue, or any
// SQS-compatible endpoint (the kumo emulator in tests), over aws-sdk-go-v2's
// SQS client (JSON protocol, SigV4 with a static access key).
//
// Every call goes to the configured endpoint: a queue URL's scheme and host
// are replaced by the endpoint's before the call, keeping its path, because
// emulators return queue URLs naming another host (kumo says
// http://localhost:4566 whatever port it listens on). SQS error codes and
// HTTP statuses are translated into apperr kinds at this boundary.
package ymq

import (
	"cmp"
	"net/http"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/validate"
)

// DefaultEndpoint is YMQ's SQS API endpoint.
const DefaultEndpoint = "https://message-queue.api.cloud.yandex.net"

// DefaultRegion is YMQ's signing region.
const DefaultRegion = "ru-central1"

// Config configures the adapter. Build it once per instance (cold start).
type Config struct {
	// Endpoint is the SQS API base URL (http or https); DefaultEndpoint if empty.
	Endpoint string
	// Region is the SigV4 signing region; DefaultRegion if empty.
	Region string
	// AccessKeyID and SecretAccessKey are a static access key (of a service
	// account, for YMQ). Both required.
	AccessKeyID     string
	SecretAccessKey string
	// HTTPClient overrides the SDK's HTTP client (optional).
	HTTPClient *http.Client
	// MaxAttempts bounds the SDK's own retries of one call (attempts
	// including the first, with backoff); 0 keeps the SDK default (3).
	MaxAttempts int
}

// Queue is a queue.Queue over the SQS API. Safe for concurrent use.
type Queue struct {
	client   *sqs.Client
	endpoint *url.URL
}

var _ queue.Queue = (*Queue)(nil)

// New validates cfg and builds the client. It does not contact the endpoint.
// Errors are Invalid.
func New(cfg Config) (*Queue, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	ep, _ := url.Parse(cfg.Endpoint) // Validate parsed it
	opts := sqs.Options{
		Region:           cfg.Region,
		BaseEndpoint:     aws.String(strings.TrimSuffix(cfg.Endpoint, "/")),
		Credentials:      aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(cfg.AccessKeyID, cfg.SecretAccessKey, "")),
		RetryMaxAttempts: cfg.MaxAttempts,
	}
	if cfg.HTTPClient != nil {
		opts.HTTPClient = cfg.HTTPClient
	}
	return &Queue{client: sqs.New(opts), endpoint: ep}, nil
}

// Validate reports what New would refuse: an Endpoint (when set) that is
// not an http(s) URL with a host, a missing AccessKeyID or SecretAccessKey,
// or a negative MaxAttempts. Errors are apperr.Invalid and name the fields.
func (c Config) Validate() error {
	var p validate.Problems
	if c.Endpoint != "" {
		ep, err := url.Parse(c.Endpoint)
		if err != nil || (ep.Scheme != "http" && ep.Scheme != "https") || ep.Host == "" {
			p.Add("Endpoint", "must be an http(s) URL with a host (got %q)", c.Endpoint)
		}
	}
	p.Require(c.AccessKeyID != "", "AccessKeyID")
	p.Require(c.SecretAccessKey != "", "SecretAccessKey")
	validate.NotNegative(&p, "MaxAttempts", c.MaxAttempts)
	return p.Err("ymq")
}

// setDefaults gives each zero field of c its documented default.
func (c *Config) setDefaults() {
	c.Endpoint = cmp.Or(c.Endpoint, DefaultEndpoint)
	c.Region = cmp.Or(c.Region, DefaultRegion)
}

// target returns queueURL pointed at the configured endpoint: its scheme
// and host replaced, its path kept. Errors are Invalid.
func (q *Queue) target(queueURL string) (*string, error) {
	u, err := url.Parse(queueURL)
	if err != nil || u.Host == "" || u.Path == "" || u.Path == "/" {
		return nil, apperr.New(apperr.Invalid, "ymq: bad queue URL %q", queueURL)
	}
	u.Scheme, u.Host, u.User = q.endpoint.Scheme, q.endpoint.Host, nil
	return aws.String(u.String()), nil
}

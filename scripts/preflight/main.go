// Command preflight proves, before the first deploy (and before each one),
// every platform assumption ordersaga makes, one line per check with PASS or
// FAIL and what to do, in under two minutes:
//
//	go run ./scripts/preflight                     # the cloud, with the operator's credentials
//	go run ./scripts/preflight -local [-invoke-url http://127.0.0.1:8080/_invoke]   # offline rehearsal
//
// Message Queue: two temporary standard queues (a work queue whose redrive
// policy names a dead-letter queue, as saga-commands does) get every call
// the project makes, through the ymq adapter with the parameters it uses
// (CreateQueue with VisibilityTimeout and RedrivePolicy, GetQueueAttributes
// for the ARN and the depth, SendMessageBatch with the outbox's message
// attributes and a delay, ReceiveMessage with the wait, all message
// attributes and the receive count, ChangeMessageVisibility, DeleteMessage,
// the move to the dead-letter queue), then a temporary FIFO queue
// (MessageGroupId, MessageDeduplicationId, DeleteMessageBatch); every
// temporary queue is deleted. If the JSON protocol is refused, the line says
// so and names the fallback.
//
// YDB: connect to the deployed database with the deployer's token, read the
// migration state and one row; with -scratch-dsn, migrate a scratch
// database, measure the request units the server charges for an order's
// insert, read and update, and run the store conformance suite on it.
//
// IAM and wiring: with -function-ids (or -invoke-url locally) every
// function answers its self-check with its own service account.
//
// -local runs the same checks offline: the queue calls against the SQS
// emulator (ORDERSAGA_SQS_ENDPOINT, through the same ymq adapter) or the
// embedded queue, the store on a scratch SQLite file, the self-checks
// against the local runner. scripts/test.sh runs it.
//
// Environment: YMQ_ENDPOINT, YMQ_REGION, YMQ_ACCESS_KEY_ID and
// YMQ_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY: a
// static key whose service account holds ymq.admin), YDB_CONNECTION_STRING,
// YDB_TOKEN (or YC_TOKEN), PREFLIGHT_SCRATCH_DSN, PREFLIGHT_FUNCTION_IDS
// (the JSON of `terraform output -json function_ids`). Exit status 1 when a
// check fails. docs/deploy.md shows a run.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	"ordersaga/shared/adapters/sqlitequeue"
	"ordersaga/shared/adapters/ymq"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/kit/text"
)

type options struct {
	local      bool
	root       string
	endpoint   string
	region     string
	keyID      string
	secret     string
	dsn        string
	ydbAuth    string
	ydbToken   string
	scratchDSN string
	ids        map[string]string
	invokeURL  string
	yc         string
	storetest  bool
	timeout    time.Duration
	// connectTimeout bounds each YDB connect (default 20 s).
	connectTimeout time.Duration
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "preflight:", err)
		os.Exit(1)
	}
}

func env(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

func run(args []string, out io.Writer) error {
	var o options
	fs := flag.NewFlagSet("preflight", flag.ContinueOnError)
	fs.BoolVar(&o.local, "local", false, "offline rehearsal: the SQS emulator (ORDERSAGA_SQS_ENDPOINT) or the embedded queue, a scratch SQLite store, the local runner's self-checks")
	fs.StringVar(&o.endpoint, "endpoint", env("YMQ_ENDPOINT"), "Message Queue endpoint (default "+ymq.DefaultEndpoint+"; with -local: ORDERSAGA_SQS_ENDPOINT)")
	fs.StringVar(&o.region, "region", env("YMQ_REGION"), "signing region (default "+ymq.DefaultRegion+")")
	fs.StringVar(&o.dsn, "dsn", env("YDB_CONNECTION_STRING"), "the deployed database (terraform output -raw ydb_endpoint)")
	fs.StringVar(&o.ydbAuth, "ydb-auth", "token", "YDB auth mode of this machine: token (YDB_TOKEN or YC_TOKEN) or anonymous (local-ydb)")
	fs.StringVar(&o.scratchDSN, "scratch-dsn", env("PREFLIGHT_SCRATCH_DSN"), "a scratch database to migrate and run the store conformance suite on (never the production one)")
	ids := fs.String("function-ids", env("PREFLIGHT_FUNCTION_IDS"), "JSON {name: id} of the deployed functions (terraform output -json function_ids) for their self-checks")
	fs.StringVar(&o.invokeURL, "invoke-url", "", "instead of yc: POST self-check events to <url>/<function> (the local runner's http://127.0.0.1:8080/_invoke)")
	fs.StringVar(&o.yc, "yc", "yc", "yc CLI to invoke the functions with")
	fs.BoolVar(&o.storetest, "storetest", false, "with -local: also run the SQLite store conformance suite (go test)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "the whole preflight's time limit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *ids != "" {
		if err := json.Unmarshal([]byte(*ids), &o.ids); err != nil {
			return fmt.Errorf("-function-ids is not a JSON object of names to ids: %v", err)
		}
	}
	o.keyID = env("YMQ_ACCESS_KEY_ID", "AWS_ACCESS_KEY_ID")
	o.secret = env("YMQ_SECRET_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY")
	o.ydbToken = env("YDB_TOKEN", "YC_TOKEN")
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	o.root = root
	ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
	defer cancel()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	return preflight(ctx, o, out)
}

// preflight runs every check of o's mode and prints the report.
func preflight(ctx context.Context, o options, out io.Writer) error {
	r := newReport(out)
	mode := "cloud"
	if o.local {
		mode = "local"
	}
	fmt.Fprintf(out, "preflight (%s): each line PASS, FAIL (with the fix) or SKIP (with what would run it)\n", mode)
	prefix := "ordersaga-preflight-" + randomHex(3)
	q, admin, cleanup, l := openQueue(o)
	r.check("queue.client", func() line { return l })
	if q != nil {
		probeQueue(ctx, r, q, admin, prefix)
		cleanup()
	}
	if o.local {
		probeSQLite(ctx, r, o)
	} else {
		probeYDB(ctx, r, o)
	}
	switch {
	case o.invokeURL != "":
		probeSelfChecks(ctx, r, httpInvoker(o.invokeURL))
	case len(o.ids) > 0:
		probeSelfChecks(ctx, r, ycInvoker(o.yc, o.ids))
	default:
		r.add(line{Verdict: skip, Check: "selfcheck", Detail: "no -function-ids (cloud) or -invoke-url (local runner): the functions' self-checks prove IAM and wiring; scripts/smoke runs them after every apply"})
	}
	return r.finish()
}

// openQueue builds the queue under test: the ymq adapter (Message Queue, or
// the SQS emulator with -local), or the embedded queue in a temporary file.
func openQueue(o options) (queue.Queue, queueAdmin, func(), line) {
	endpoint, keyID, secret, what := o.endpoint, o.keyID, o.secret, "Message Queue"
	if o.local {
		endpoint, what = env("ORDERSAGA_SQS_ENDPOINT"), "the SQS emulator"
		if endpoint == "" {
			dir, err := os.MkdirTemp("", "preflight-queue-")
			if err != nil {
				return nil, nil, func() {}, bad("", "temporary directory: %v", err)
			}
			q, err := sqlitequeue.Open(filepath.Join(dir, "queue.db"), sqlitequeue.Config{})
			if err != nil {
				return nil, nil, func() {}, bad("go test ./shared/adapters/sqlitequeue/", "embedded queue: %v", err)
			}
			return q, nil, func() { _ = q.Close(); _ = os.RemoveAll(dir) }, ok("the embedded queue (set ORDERSAGA_SQS_ENDPOINT to rehearse the ymq adapter against the SQS emulator)")
		}
		if keyID == "" {
			keyID, secret = "test", "test"
		}
	}
	if endpoint == "" {
		endpoint = ymq.DefaultEndpoint
	}
	region := o.region
	if region == "" {
		region = ymq.DefaultRegion
	}
	if keyID == "" || secret == "" {
		return nil, nil, func() {}, bad("export YMQ_ACCESS_KEY_ID and YMQ_SECRET_ACCESS_KEY: a static key of a service account with ymq.admin "+
			"(yc iam access-key create --service-account-name <sa>; docs/deploy.md, \"Preflight\")", "no static access key for %s", what)
	}
	q, err := ymq.New(ymq.Config{Endpoint: endpoint, Region: region, AccessKeyID: keyID, SecretAccessKey: secret})
	if err != nil {
		return nil, nil, func() {}, bad("fix the endpoint or key", "ymq client: %v", err)
	}
	admin, err := newYMQAdmin(endpoint, region, keyID, secret)
	if err != nil {
		return nil, nil, func() {}, bad("fix the endpoint", "%v", err)
	}
	return q, admin, func() {}, ok("%s at %s, region %s, key %s… (aws-sdk-go-v2 service/sqs, JSON protocol)", what, endpoint, region, text.Cut(keyID, 4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory: run from the repository")
		}
		dir = parent
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"ordersaga/shared/kit/text"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// functions are the five functions, each answering the self-check.
var functions = []string{"orderapi", "outboxrelay", "sagaadvancer", "sagarecovery", "dlqredrive"}

// invoker sends one raw event to a function and returns its JSON result.
type invoker func(ctx context.Context, function string, event []byte) ([]byte, error)

// httpInvoker posts to the local runner's /_invoke/<function>.
func httpInvoker(base string) invoker {
	client := &http.Client{Timeout: 30 * time.Second}
	return func(ctx context.Context, function string, event []byte) ([]byte, error) {
		url := strings.TrimRight(base, "/") + "/" + function
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(event))
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("POST %s = %d: %s", url, resp.StatusCode, b)
		}
		return b, nil
	}
}

// ycInvoker runs `yc serverless function invoke <id> -d <event>` as the
// operator (who needs functions.functionInvoker, or editor, on the folder).
func ycInvoker(yc string, ids map[string]string) invoker {
	return func(ctx context.Context, function string, event []byte) ([]byte, error) {
		id := ids[function]
		if id == "" {
			return nil, fmt.Errorf("no function id for %s in -function-ids", function)
		}
		cmd := exec.CommandContext(ctx, yc, "serverless", "function", "invoke", id, "-d", string(event))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s serverless function invoke %s: %v: %s", yc, id, err, strings.TrimSpace(stderr.String()))
		}
		return bytes.TrimSpace(stdout.Bytes()), nil
	}
}

// selfReport is the part of a function's self-check report preflight reads.
type selfReport struct {
	Action   string `json:"action"`
	Function string `json:"function"`
	Verdict  string `json:"verdict"`
	Checks   []struct {
		Check   string `json:"check"`
		Verdict string `json:"verdict"`
		Detail  string `json:"detail"`
		Fix     string `json:"fix"`
	} `json:"checks"`
	ErrorMessage string `json:"errorMessage"`
}

// probeSelfChecks asks every function for its self-check: each proves,
// with its own service account, that it can read its configuration (and
// Lockbox secrets), open a YDB session and read, and read its queues.
func probeSelfChecks(ctx context.Context, r *report, invoke invoker) {
	for _, fn := range functions {
		r.check("selfcheck."+fn, func() line {
			raw, err := invoke(ctx, fn, []byte(`{"action":"selfcheck"}`))
			if err != nil {
				return bad("the function could not be invoked: check that it is deployed (terraform output function_ids) and that you may invoke it", "%v", err)
			}
			var rep selfReport
			if err := json.Unmarshal(raw, &rep); err != nil || rep.Action != "selfcheck" {
				return bad("the deployed code predates the self-check: run scripts/deploy.sh", "not a self-check report: %s", text.Clip(string(raw), 300))
			}
			var failed, warned []string
			fix := ""
			for _, c := range rep.Checks {
				switch c.Verdict {
				case "FAIL":
					failed = append(failed, c.Check+": "+c.Detail)
					if fix == "" {
						fix = c.Fix
					}
				case "WARN":
					warned = append(warned, c.Check)
				}
			}
			if rep.Verdict == "FAIL" || len(failed) > 0 {
				return bad(fix, "%s", strings.Join(failed, "; "))
			}
			sort.Strings(warned)
			detail := fmt.Sprintf("%d checks %s", len(rep.Checks), rep.Verdict)
			if len(warned) > 0 {
				detail += " (warnings: " + strings.Join(warned, ", ") + ")"
			}
			return ok("%s", detail)
		})
	}
}

package runner

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
	"ordersaga/shared/transport/httpapi"
)

// sendHTTP is the console's (or `aws sqs send-message`'s) "send a message
// to a queue" locally: POST /_queues/{name} with {"body": "...",
// "attributes": {...}} sends one message to the named queue of
// triggers.yaml and answers {"message_id": "..."}. The smoke test drives a
// dead letter through it.
func (rt *runner) sendHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpapi.WriteStatus(w, r, http.StatusMethodNotAllowed, `POST {"body": "...", "attributes": {...}}`)
		return
	}
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/_queues/"), "/")
	known := false
	for _, q := range rt.file.Queues {
		known = known || q.Name == name
	}
	if !known {
		httpapi.WriteError(w, r, apperr.New(apperr.NotFound, "no queue named %q in triggers.yaml", name))
		return
	}
	var in struct {
		Body       string            `json:"body"`
		Attributes map[string]string `json:"attributes"`
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxInvokeBytes))
	if err == nil {
		err = json.Unmarshal(raw, &in)
	}
	if err != nil || in.Body == "" {
		httpapi.WriteError(w, r, apperr.New(apperr.Invalid, `send {"body": "<non-empty>", "attributes": {...}}`))
		return
	}
	res, err := rt.queue.SendBatch(r.Context(), rt.queueURL(name), []queue.OutMessage{{ID: "m", Body: in.Body, Attributes: in.Attributes}})
	if err == nil && len(res) == 1 {
		err = res[0].Err
	}
	if err != nil {
		if !apperr.Is(err, apperr.Invalid) {
			err = apperr.Wrap(apperr.Internal, err, "%s", err.Error())
		}
		httpapi.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"message_id": res[0].MessageID})
}

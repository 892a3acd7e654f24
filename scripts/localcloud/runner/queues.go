package runner

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"ordersaga/shared/domain/apperr"
	"ordersaga/shared/domain/queue"
)

// sendHTTP is the console's (or `aws sqs send-message`'s) "send a message
// to a queue" locally: POST /_queues/{name} with {"body": "...",
// "attributes": {...}} sends one message to the named queue of
// triggers.yaml and answers {"message_id": "..."}. The smoke test drives a
// dead letter through it.
func (rt *runner) sendHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, `POST {"body": "...", "attributes": {...}}`, http.StatusMethodNotAllowed)
		return
	}
	name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/_queues/"), "/")
	known := false
	for _, q := range rt.file.Queues {
		known = known || q.Name == name
	}
	if !known {
		http.Error(w, "no queue named "+name+" in triggers.yaml", http.StatusNotFound)
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
		http.Error(w, `send {"body": "<non-empty>", "attributes": {...}}`, http.StatusBadRequest)
		return
	}
	res, err := rt.queue.SendBatch(r.Context(), rt.queueURL(name), []queue.OutMessage{{ID: "m", Body: in.Body, Attributes: in.Attributes}})
	if err == nil && len(res) == 1 {
		err = res[0].Err
	}
	if err != nil {
		status := http.StatusInternalServerError
		if apperr.Is(err, apperr.Invalid) {
			status = http.StatusBadRequest
		}
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"message_id": res[0].MessageID})
}

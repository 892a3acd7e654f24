// Package yc decodes and encodes the Yandex Cloud Functions platform events
// that ordersaga's functions receive, and adapts HTTP invocations to net/http:
//
//   - timer trigger events (DecodeTimer, EncodeTimer);
//   - Message Queue trigger events (DecodeQueue, EncodeQueue);
//   - HTTP invocations through API Gateway (payload_format_version "1.0") or
//     direct HTTP calls (HTTPRequest, ToHTTPRequest, ServeEvent, HTTPResponse);
//   - the invocation context the Go runtime passes (RequestID, FunctionID,
//     TimeLeft, WorkBudget).
//
// Every function decodes its trigger envelope here, and the local runner uses
// the encoders to invoke functions exactly as the platform triggers do.
// Malformed envelopes are reported as apperr.Invalid with a message and a
// JSON pointer naming the offending field.
//
// Formats follow /work/shared/docs/platform-notes.md §1.3, §1.8, §2.1, §2.3,
// §3.1 and §3.2. All functions are pure and safe for concurrent use.
package yc

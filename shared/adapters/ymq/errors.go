package ymq

import (
	"context"
	"errors"
	"net"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"ordersaga/shared/domain/apperr"
)

// codeKinds maps SQS (and YMQ) error codes to kinds. Codes are the API's
// stable machine-readable identifiers, not message text.
var codeKinds = map[string]apperr.Kind{
	// The queue does not exist.
	"QueueDoesNotExist":                       apperr.NotFound,
	"AWS.SimpleQueueService.NonExistentQueue": apperr.NotFound,
	"NonExistentQueue":                        apperr.NotFound,
	// Throttling, overload, server faults, temporary states.
	"RequestThrottled":            apperr.Transient,
	"ThrottlingException":         apperr.Transient,
	"Throttling":                  apperr.Transient,
	"TooManyRequestsException":    apperr.Transient,
	"KmsThrottled":                apperr.Transient,
	"OverLimit":                   apperr.Transient,
	"ServiceUnavailable":          apperr.Transient,
	"ServiceUnavailableException": apperr.Transient,
	"InternalError":               apperr.Transient,
	"InternalFailure":             apperr.Transient,
	"RequestTimeout":              apperr.Transient,
	"PurgeQueueInProgress":        apperr.Transient,
	"QueueDeletedRecently":        apperr.Transient,
	"AWS.SimpleQueueService.QueueDeletedRecently": apperr.Transient,
	// Bad requests.
	"InvalidParameterValue":        apperr.Invalid,
	"InvalidParameterCombination":  apperr.Invalid,
	"MissingParameter":             apperr.Invalid,
	"InvalidAttributeName":         apperr.Invalid,
	"InvalidAttributeValue":        apperr.Invalid,
	"InvalidBatchEntryId":          apperr.Invalid,
	"BatchEntryIdsNotDistinct":     apperr.Invalid,
	"TooManyEntriesInBatchRequest": apperr.Invalid,
	"EmptyBatchRequest":            apperr.Invalid,
	"BatchRequestTooLong":          apperr.Invalid,
	"InvalidMessageContents":       apperr.Invalid,
	"MessageTooLong":               apperr.Invalid,
	"InvalidIdFormat":              apperr.Invalid,
	"ReceiptHandleIsInvalid":       apperr.Invalid,
	"UnsupportedOperation":         apperr.Invalid,
	"ValidationError":              apperr.Invalid,
	"InvalidAddress":               apperr.Invalid,
	"InvalidAction":                apperr.Invalid,
	"MalformedQueryString":         apperr.Invalid,
	// A queue exists with other attributes.
	"QueueNameExists":    apperr.Conflict,
	"QueueAlreadyExists": apperr.Conflict,
	// Credentials and permissions.
	"InvalidClientTokenId":        apperr.Unauthenticated,
	"SignatureDoesNotMatch":       apperr.Unauthenticated,
	"MissingAuthenticationToken":  apperr.Unauthenticated,
	"IncompleteSignature":         apperr.Unauthenticated,
	"UnrecognizedClientException": apperr.Unauthenticated,
	"InvalidSecurity":             apperr.Unauthenticated,
	"AccessDenied":                apperr.Forbidden,
	"AccessDeniedException":       apperr.Forbidden,
	"KmsAccessDenied":             apperr.Forbidden,
}

// errorCode returns the API error code in err's chain, or "".
func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// hasCode reports whether err carries one of the API error codes.
func hasCode(err error, codes ...string) bool {
	code := errorCode(err)
	for _, c := range codes {
		if code != "" && code == c {
			return true
		}
	}
	return false
}

// kindOf classifies an SDK error: by context end, then API error code, then
// fault and HTTP status, then transport failure. Unknown errors are Internal.
func kindOf(err error) apperr.Kind {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return apperr.Transient
	}
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if k, ok := codeKinds[apiErr.ErrorCode()]; ok {
			return k
		}
	}
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		if k, ok := statusKind(respErr.HTTPStatusCode()); ok {
			return k
		}
	}
	if apiErr != nil && apiErr.ErrorFault() == smithy.FaultServer {
		return apperr.Transient
	}
	var sendErr *smithyhttp.RequestSendError
	var netErr net.Error
	if errors.As(err, &sendErr) || errors.As(err, &netErr) {
		return apperr.Transient
	}
	return apperr.Internal
}

// statusKind classifies an HTTP status of an error response.
func statusKind(status int) (apperr.Kind, bool) {
	switch {
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500:
		return apperr.Transient, true
	case status == http.StatusUnauthorized:
		return apperr.Unauthenticated, true
	case status == http.StatusForbidden:
		return apperr.Forbidden, true
	case status == http.StatusNotFound:
		return apperr.NotFound, true
	case status == http.StatusRequestEntityTooLarge || status >= 400:
		return apperr.Invalid, true
	}
	return 0, false
}

// wrap classifies err and wraps it with a caller-safe message.
func wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	return apperr.Wrap(kindOf(err), err, "ymq: %s", op)
}

// entryKind classifies the failure of one batch entry: its code decides when
// known (NotFound, Transient), else the sender-fault flag: the sender's
// fault is Invalid, the service's Transient.
func entryKind(code string, senderFault bool) apperr.Kind {
	switch k := codeKinds[code]; {
	case code != "" && (k == apperr.NotFound || k == apperr.Transient):
		return k
	case senderFault:
		return apperr.Invalid
	default:
		return apperr.Transient
	}
}

package limits

import (
	"crypto/rand"
	"encoding/json"
	"hash/crc32"
	"net/http"
	"strconv"
)

// Exception names, as DynamoDB's JSON protocol sends them in __type.
const (
	typePrefix             = "com.amazonaws.dynamodb.v20120810#"
	ExcProvisioned         = "ProvisionedThroughputExceededException"
	ExcThrottling          = "ThrottlingException"
	ExcTransactionCanceled = "TransactionCanceledException"
	ExcTransactionConflict = "TransactionConflictException"
)

// The messages AWS sends with each exception.
const (
	msgProvisioned = "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."
	msgThrottling  = "Throughput exceeds the current throughput limit for your table or index. Consider increasing your limit or reducing your request rate."
	msgConflict    = "Transaction is ongoing for the item"
	msgThrottleTx  = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html."
)

// Reason is one ThrottlingReason (API_ThrottlingReason): what was
// throttled, why, and the ARN of the table or index.
type Reason struct {
	Reason   string `json:"reason"`
	Resource string `json:"resource"`
}

// exceptionFor picks the exception of a throttled request: the
// partition and provisioned-capacity reasons are a
// ProvisionedThroughputExceededException, the on-demand limits (account
// quota, on-demand maximum) a ThrottlingException.
func exceptionFor(reasons []Reason) (string, string) {
	for _, r := range reasons {
		if hasSuffix(r.Reason, "KeyRangeThroughputExceeded") || hasSuffix(r.Reason, "ProvisionedThroughputExceeded") {
			return ExcProvisioned, msgProvisioned
		}
	}
	return ExcThrottling, msgThrottling
}

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

// cancellation is one CancellationReason of a TransactionCanceledException.
type cancellation struct {
	Code    string `json:"Code"`
	Message string `json:"Message,omitempty"`
}

// writeError answers an error as DynamoDB does: HTTP 400, the JSON 1.0
// content type, a request id and the CRC32 of the body.
func writeError(w http.ResponseWriter, body map[string]any) {
	b, err := json.Marshal(body)
	if err != nil { // maps of strings and slices always marshal
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-amz-json-1.0")
	h.Set("X-Amzn-Requestid", requestID())
	h.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(b)), 10))
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write(b)
}

func throttleBody(reasons []Reason) map[string]any {
	exc, msg := exceptionFor(reasons)
	// The API model names the member ThrottlingReasons in
	// ProvisionedThroughputExceededException and throttlingReasons in
	// ThrottlingException; the SDKs read exactly these.
	field := "ThrottlingReasons"
	if exc == ExcThrottling {
		field = "throttlingReasons"
	}
	return map[string]any{"__type": typePrefix + exc, "message": msg, field: reasons}
}

func canceledBody(reasons []cancellation) map[string]any {
	codes := ""
	for i, r := range reasons {
		if i > 0 {
			codes += ", "
		}
		codes += r.Code
	}
	return map[string]any{"__type": typePrefix + ExcTransactionCanceled,
		"Message":             "Transaction cancelled, please refer cancellation reasons for specific reasons [" + codes + "]",
		"CancellationReasons": reasons}
}

func conflictBody() map[string]any {
	return map[string]any{"__type": typePrefix + ExcTransactionConflict, "message": msgConflict}
}

const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// requestID is a random id shaped like DynamoDB's (52 characters).
func requestID() string {
	b := make([]byte, 52)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idChars[int(b[i])%len(idChars)]
	}
	return string(b)
}

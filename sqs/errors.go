package sqs

import (
	"fmt"
	"strconv"
)

// Code is an Amazon SQS error code. The names are the ones the SQS API
// reference lists for each action (the JSON protocol's short codes; the
// query protocol prefixes some with "AWS.SimpleQueueService."). OK is not
// an AWS code: it means success.
type Code uint8

// The error codes the engine returns, each with AWS's meaning.
const (
	OK Code = iota
	// QueueDoesNotExist: the named queue does not exist.
	QueueDoesNotExist
	// QueueAlreadyExists: CreateQueue named an existing queue with a
	// different value for one of its attributes.
	QueueAlreadyExists
	// InvalidAttributeName: an attribute name is unknown, or not valid for
	// this queue type.
	InvalidAttributeName
	// InvalidAttributeValue: a queue attribute value is malformed or out of
	// its range.
	InvalidAttributeValue
	// InvalidParameterValue: a request parameter is malformed or out of its
	// range; also a receipt handle that has expired, and a visibility change
	// for a message that no longer exists.
	InvalidParameterValue
	// MissingParameter: a required parameter is absent (MessageBody;
	// MessageGroupId on a FIFO queue).
	MissingParameter
	// ReceiptHandleIsInvalid: the receipt handle is malformed, belongs to
	// another queue, or (for ChangeMessageVisibility and batch entries) has
	// been superseded.
	ReceiptHandleIsInvalid
	// MessageNotInflight: ChangeMessageVisibility for a message that is not
	// in flight.
	MessageNotInflight
	// OverLimit: the action would exceed a limit; ReceiveMessage on a
	// standard queue whose in-flight messages reached the limit.
	OverLimit
	// EmptyBatchRequest: a batch request with no entries.
	EmptyBatchRequest
	// TooManyEntriesInBatchRequest: a batch request with more than 10
	// entries.
	TooManyEntriesInBatchRequest
	// BatchEntryIdsNotDistinct: two batch entries share an Id.
	BatchEntryIdsNotDistinct
	// InvalidBatchEntryId: a batch entry Id is not 1-80 characters of
	// letters, digits, hyphens and underscores.
	InvalidBatchEntryId
	// BatchRequestTooLong: the messages of a SendMessageBatch together
	// exceed the payload limit.
	BatchRequestTooLong
	// PurgeQueueInProgress: a second PurgeQueue within 60 seconds.
	PurgeQueueInProgress
	numCodes
)

var codeNames = [numCodes]string{
	OK:                           "OK",
	QueueDoesNotExist:            "QueueDoesNotExist",
	QueueAlreadyExists:           "QueueAlreadyExists",
	InvalidAttributeName:         "InvalidAttributeName",
	InvalidAttributeValue:        "InvalidAttributeValue",
	InvalidParameterValue:        "InvalidParameterValue",
	MissingParameter:             "MissingParameter",
	ReceiptHandleIsInvalid:       "ReceiptHandleIsInvalid",
	MessageNotInflight:           "MessageNotInflight",
	OverLimit:                    "OverLimit",
	EmptyBatchRequest:            "EmptyBatchRequest",
	TooManyEntriesInBatchRequest: "TooManyEntriesInBatchRequest",
	BatchEntryIdsNotDistinct:     "BatchEntryIdsNotDistinct",
	InvalidBatchEntryId:          "InvalidBatchEntryId",
	BatchRequestTooLong:          "BatchRequestTooLong",
	PurgeQueueInProgress:         "PurgeQueueInProgress",
}

// String returns AWS's name of the code.
func (c Code) String() string {
	if c < numCodes {
		return codeNames[c]
	}
	return "Code(" + strconv.Itoa(int(c)) + ")"
}

// Error is an SQS error response: the code and a message in AWS's wording
// where AWS's wording is known, extended with the allowed range where AWS's
// is silent about it.
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return "sqs: " + e.Code.String() + ": " + e.Message }

// Is lets errors.Is match an *Error by code alone:
// errors.Is(err, &sqs.Error{Code: sqs.OverLimit}).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

func newErr(c Code, format string, args ...any) *Error {
	return &Error{Code: c, Message: fmt.Sprintf(format, args...)}
}

// Error messages shared by several actions.
func errNoQueue(name string) *Error {
	return newErr(QueueDoesNotExist, "The specified queue %s does not exist.", name)
}

func errBadHandle(h string) *Error {
	return newErr(ReceiptHandleIsInvalid, "The input receipt handle %q is not a valid receipt handle.", h)
}

// errExpiredHandle is what a single DeleteMessage answers on a FIFO queue
// for a handle whose lease ended (and a standard queue for a handle older
// than 12 hours).
func errExpiredHandle(h string) *Error {
	return newErr(InvalidParameterValue, "Value %s for parameter ReceiptHandle is invalid. Reason: The receipt handle has expired.", h)
}

// errSupersededHandle is what ChangeMessageVisibility answers for the handle
// of a receive that a later receive of the same message replaced.
func errSupersededHandle(h string) *Error {
	return newErr(ReceiptHandleIsInvalid, "The input receipt handle %q is not a valid receipt handle: the message was received again since (the receipt handle has expired).", h)
}

func errParamRange(param string, v int, lo, hi int) *Error {
	return newErr(InvalidParameterValue, "Value %d for parameter %s is invalid. Reason: Must be between %d and %d, if provided.", v, param, lo, hi)
}

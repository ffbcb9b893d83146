package model

import "strconv"

// ResponseCode is RocketMQ's remoting response code (ResponseCode.java).
type ResponseCode int32

// The response codes the POP engine and its clients use, with RocketMQ's
// numbers.
const (
	Success                   ResponseCode = 0
	SystemError               ResponseCode = 1
	SystemBusy                ResponseCode = 2
	MessageIllegal            ResponseCode = 13
	ServiceNotAvailable       ResponseCode = 14
	NoPermission              ResponseCode = 16
	TopicNotExist             ResponseCode = 17
	PullNotFound              ResponseCode = 19
	PullRetryImmediately      ResponseCode = 20
	PullOffsetMoved           ResponseCode = 21
	QueryNotFound             ResponseCode = 22
	SubscriptionParseFailed   ResponseCode = 23
	SubscriptionNotExist      ResponseCode = 24
	SubscriptionGroupNotExist ResponseCode = 26
	InvalidParameter          ResponseCode = 29
	NoMessage                 ResponseCode = 208
	PollingFull               ResponseCode = 209
	PollingTimeout            ResponseCode = 210
)

var codeNames = map[ResponseCode]string{
	Success:                   "SUCCESS",
	SystemError:               "SYSTEM_ERROR",
	SystemBusy:                "SYSTEM_BUSY",
	MessageIllegal:            "MESSAGE_ILLEGAL",
	ServiceNotAvailable:       "SERVICE_NOT_AVAILABLE",
	NoPermission:              "NO_PERMISSION",
	TopicNotExist:             "TOPIC_NOT_EXIST",
	PullNotFound:              "PULL_NOT_FOUND",
	PullRetryImmediately:      "PULL_RETRY_IMMEDIATELY",
	PullOffsetMoved:           "PULL_OFFSET_MOVED",
	QueryNotFound:             "QUERY_NOT_FOUND",
	SubscriptionParseFailed:   "SUBSCRIPTION_PARSE_FAILED",
	SubscriptionNotExist:      "SUBSCRIPTION_NOT_EXIST",
	SubscriptionGroupNotExist: "SUBSCRIPTION_GROUP_NOT_EXIST",
	InvalidParameter:          "INVALID_PARAMETER",
	NoMessage:                 "NO_MESSAGE",
	PollingFull:               "POLLING_FULL",
	PollingTimeout:            "POLLING_TIMEOUT",
}

// String returns RocketMQ's constant name, e.g. "POLLING_FULL(209)".
func (c ResponseCode) String() string {
	n, ok := codeNames[c]
	if !ok {
		n = "UNKNOWN"
	}
	return n + "(" + strconv.Itoa(int(c)) + ")"
}

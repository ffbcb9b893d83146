package proxy

import (
	"strconv"

	"popsim/model"
)

// Code is a gRPC status code of apache.rocketmq.v2 (the ones the consumer
// calls answer).
type Code int32

// gRPC codes, with RocketMQ's numbers.
const (
	OK                      Code = 20000
	BadRequest              Code = 40000
	IllegalFilterExpression Code = 40010
	IllegalInvisibleTime    Code = 40011
	InvalidReceiptHandle    Code = 40013
	IllegalPollingTime      Code = 40018
	MessageNotFound         Code = 40401
	TopicNotFound           Code = 40402
	ConsumerGroupNotFound   Code = 40403
	TooManyRequests         Code = 42900
	InternalServerError     Code = 50001
	NotImplemented          Code = 50100
)

var codeNames = map[Code]string{
	OK: "OK", BadRequest: "BAD_REQUEST", IllegalFilterExpression: "ILLEGAL_FILTER_EXPRESSION", IllegalInvisibleTime: "ILLEGAL_INVISIBLE_TIME",
	InvalidReceiptHandle: "INVALID_RECEIPT_HANDLE", IllegalPollingTime: "ILLEGAL_POLLING_TIME",
	MessageNotFound: "MESSAGE_NOT_FOUND", TopicNotFound: "TOPIC_NOT_FOUND",
	ConsumerGroupNotFound: "CONSUMER_GROUP_NOT_FOUND", TooManyRequests: "TOO_MANY_REQUESTS",
	InternalServerError: "INTERNAL_SERVER_ERROR", NotImplemented: "NOT_IMPLEMENTED",
}

// String is the code's name and number, e.g. "INVALID_RECEIPT_HANDLE(40013)".
func (c Code) String() string {
	n, ok := codeNames[c]
	if !ok {
		n = "CODE"
	}
	return n + "(" + strconv.Itoa(int(c)) + ")"
}

// Status is a gRPC status: a code and its message.
type Status struct {
	Code    Code
	Message string
}

// IsOK reports an OK status.
func (s Status) IsOK() bool { return s.Code == OK }

func (s Status) String() string {
	if s.Message == "" {
		return s.Code.String()
	}
	return s.Code.String() + " " + strconv.Quote(s.Message)
}

var statusOK = Status{Code: OK}

// brokerStatus maps a broker code of an ack or a renewal to the gRPC
// status (ResponseBuilder.buildStatus for the codes a broker answers).
func brokerStatus(code model.ResponseCode, what string) Status {
	switch code {
	case model.Success:
		return statusOK
	case model.SystemBusy:
		return Status{Code: TooManyRequests, Message: what + " failed: system busy"}
	case model.TopicNotExist:
		return Status{Code: TopicNotFound, Message: what + " failed: topic not exist"}
	case model.SubscriptionGroupNotExist:
		return Status{Code: ConsumerGroupNotFound, Message: what + " failed: group not exist"}
	}
	return Status{Code: InternalServerError, Message: what + " failed: status is abnormal"}
}

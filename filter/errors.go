package filter

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// ParseFailedRemark is the remark of the broker's SUBSCRIPTION_PARSE_FAILED
// (23) answer to a pop whose subscription does not build or compile
// (PopMessageProcessor). The broker does not say why; Error does.
const ParseFailedRemark = "parse the consumer's subscription failed"

// PropertyFilterDisabledRemark is the remark of the SYSTEM_ERROR (1) answer
// that a pull or a client-config check gets for a non-TAG subscription when
// the broker's enablePropertyFilter is false (PullMessageProcessor,
// ClientManageProcessor.checkClientConfig). Pops are not checked.
func PropertyFilterDisabledRemark(expressionType string) string {
	return "The broker does not support consumer to filter message by " + expressionType
}

// Error is a subscription expression that does not parse or compile: what
// RocketMQ answers with SUBSCRIPTION_PARSE_FAILED. It names the place and
// what was expected there.
type Error struct {
	Type       string // the expression type as given
	Expression string
	// Offset is the byte offset in Expression where the problem is, or -1
	// when it is not at a place (an unsupported expression type).
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	typ := e.Type
	if typ == "" {
		typ = TypeTag
	}
	if e.Offset < 0 {
		return fmt.Sprintf("filter: %s expression %q: %s", typ, e.Expression, e.Msg)
	}
	return fmt.Sprintf("filter: %s expression %q: %s: %s", typ, e.Expression, e.Where(), e.Msg)
}

// Where renders Offset as "column C" (1-based, in characters), or "line L,
// column C" when the expression has several lines.
func (e *Error) Where() string {
	off := min(max(e.Offset, 0), len(e.Expression))
	before := e.Expression[:off]
	line := 1 + strings.Count(before, "\n")
	col := 1 + utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
	if strings.Contains(e.Expression, "\n") {
		return fmt.Sprintf("line %d, column %d", line, col)
	}
	return fmt.Sprintf("column %d", col)
}

// EvalError is a SQL92 evaluation that throws in RocketMQ: a string that
// must be read as a number and is not one, or a boolean compared with a
// string. The broker logs it and does not deliver the message.
type EvalError struct {
	Expression string
	Offset     int // byte offset of the operation that failed
	Msg        string
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("filter: evaluating %q at byte %d: %s", e.Expression, e.Offset, e.Msg)
}

package sqs

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Queue attribute names (CreateQueue's Attributes map keys).
const (
	AttrDelaySeconds                  = "DelaySeconds"
	AttrMaximumMessageSize            = "MaximumMessageSize"
	AttrMessageRetentionPeriod        = "MessageRetentionPeriod"
	AttrReceiveMessageWaitTimeSeconds = "ReceiveMessageWaitTimeSeconds"
	AttrVisibilityTimeout             = "VisibilityTimeout"
	AttrRedrivePolicy                 = "RedrivePolicy"
	AttrFifoQueue                     = "FifoQueue"
	AttrContentBasedDeduplication     = "ContentBasedDeduplication"
	AttrDeduplicationScope            = "DeduplicationScope"
	AttrFifoThroughputLimit           = "FifoThroughputLimit"
)

// Attributes AWS accepts that change nothing the engine models (access
// policy, encryption, which sources may use a queue as their DLQ). They
// are accepted and ignored.
var ignoredAttrs = []string{"KmsDataKeyReusePeriodSeconds", "KmsMasterKeyId", "Policy", "RedriveAllowPolicy", "SqsManagedSseEnabled"}

// Limits from the SQS quotas pages and the API reference, in seconds or
// bytes.
const (
	MaxDelaySeconds         = 900            // DelaySeconds 0..900 (15 minutes)
	MinMessageSize          = 1024           // MaximumMessageSize 1024..1048576
	MaxMessageSize          = 1048576        // 1 MiB, also the default
	MinRetentionSeconds     = 60             // MessageRetentionPeriod 60..1209600
	MaxRetentionSeconds     = 1209600        // 14 days
	DefaultRetentionSeconds = 345600         // 4 days
	MaxWaitTimeSeconds      = 20             // WaitTimeSeconds / ReceiveMessageWaitTimeSeconds 0..20
	MaxVisibilitySeconds    = 43200          // VisibilityTimeout 0..43200 (12 hours)
	DefaultVisibility       = 30             // VisibilityTimeout default
	MaxReceiveCountLimit    = 1000           // RedrivePolicy maxReceiveCount 1..1000
	MaxBatchEntries         = 10             // entries per batch request, MaxNumberOfMessages
	MaxBatchPayload         = MaxMessageSize // SendMessageBatch: all bodies together
	DeduplicationSeconds    = 300            // FIFO deduplication interval (5 minutes)
	AttemptIDSeconds        = 300            // ReceiveRequestAttemptId validity (5 minutes)
	PurgeIntervalSeconds    = 60             // one PurgeQueue per 60 seconds
)

// DeduplicationScope and FifoThroughputLimit values.
const (
	ScopeQueue             = "queue"
	ScopeMessageGroup      = "messageGroup"
	ThroughputPerQueue     = "perQueue"
	ThroughputPerGroupID   = "perMessageGroupId"
	fifoSuffix             = ".fifo"
	maxQueueNameLen        = 80
	maxGroupOrDedupIDBytes = 128
)

// RedrivePolicy is the parsed RedrivePolicy attribute.
type RedrivePolicy struct {
	DeadLetterTargetArn string
	MaxReceiveCount     int
}

// QueueAttributes are a queue's settable attributes, parsed and validated.
// Durations are whole seconds, as SQS takes them.
type QueueAttributes struct {
	DelaySeconds                  int
	MaximumMessageSize            int
	MessageRetentionPeriod        int
	ReceiveMessageWaitTimeSeconds int
	VisibilityTimeout             int
	RedrivePolicy                 *RedrivePolicy // nil: no dead-letter queue
	FifoQueue                     bool
	ContentBasedDeduplication     bool
	DeduplicationScope            string // FIFO: queue (default) or messageGroup
	FifoThroughputLimit           string // FIFO: perQueue (default) or perMessageGroupId
}

// DefaultAttributes returns the attributes of a queue created with none.
func DefaultAttributes(fifo bool) QueueAttributes {
	a := QueueAttributes{
		MaximumMessageSize:     MaxMessageSize,
		MessageRetentionPeriod: DefaultRetentionSeconds,
		VisibilityTimeout:      DefaultVisibility,
		FifoQueue:              fifo,
	}
	if fifo {
		a.DeduplicationScope, a.FifoThroughputLimit = ScopeQueue, ThroughputPerQueue
	}
	return a
}

// equal reports whether two attribute sets are the same, and the first
// attribute that differs.
func (a QueueAttributes) diff(b QueueAttributes) (string, bool) {
	switch {
	case a.DelaySeconds != b.DelaySeconds:
		return AttrDelaySeconds, false
	case a.MaximumMessageSize != b.MaximumMessageSize:
		return AttrMaximumMessageSize, false
	case a.MessageRetentionPeriod != b.MessageRetentionPeriod:
		return AttrMessageRetentionPeriod, false
	case a.ReceiveMessageWaitTimeSeconds != b.ReceiveMessageWaitTimeSeconds:
		return AttrReceiveMessageWaitTimeSeconds, false
	case a.VisibilityTimeout != b.VisibilityTimeout:
		return AttrVisibilityTimeout, false
	case (a.RedrivePolicy == nil) != (b.RedrivePolicy == nil) || a.RedrivePolicy != nil && *a.RedrivePolicy != *b.RedrivePolicy:
		return AttrRedrivePolicy, false
	case a.ContentBasedDeduplication != b.ContentBasedDeduplication:
		return AttrContentBasedDeduplication, false
	case a.DeduplicationScope != b.DeduplicationScope:
		return AttrDeduplicationScope, false
	case a.FifoThroughputLimit != b.FifoThroughputLimit:
		return AttrFifoThroughputLimit, false
	}
	return "", true
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ValidateQueueName checks a queue name: 1 to 80 letters, digits, hyphens
// and underscores; a FIFO queue's name ends in ".fifo" (counted in the 80)
// and only a FIFO queue's may.
func ValidateQueueName(name string, fifo bool) *Error {
	base, hasSuffix := strings.CutSuffix(name, fifoSuffix)
	ok := len(name) <= maxQueueNameLen && base != "" && nameRE.MatchString(base)
	if fifo && (!ok || !hasSuffix) {
		return newErr(InvalidParameterValue, "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length. Got %q.", name)
	}
	if !fifo && hasSuffix {
		return newErr(InvalidParameterValue, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length. Got %q: only a FIFO queue (FifoQueue=true) may end in .fifo.", name)
	}
	if !fifo && !ok {
		return newErr(InvalidParameterValue, "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length. Got %q.", name)
	}
	return nil
}

// ParseAttributes validates a CreateQueue request's name and attributes
// (AWS names, string values) and returns the queue's attributes with
// defaults filled in. Keys are checked in sorted order, so the first error
// does not depend on map order. It does not check that a RedrivePolicy's
// target exists: that needs the service.
func ParseAttributes(name string, attrs map[string]string) (QueueAttributes, *Error) {
	fifo := false
	if v, ok := attrs[AttrFifoQueue]; ok {
		b, err := parseBool(AttrFifoQueue, v)
		if err != nil {
			return QueueAttributes{}, err
		}
		if !b {
			return QueueAttributes{}, newErr(InvalidAttributeName, "Unknown Attribute FifoQueue.")
		}
		fifo = true
	}
	if err := ValidateQueueName(name, fifo); err != nil {
		return QueueAttributes{}, err
	}
	a := DefaultAttributes(fifo)
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := a.set(k, attrs[k]); err != nil {
			return QueueAttributes{}, err
		}
	}
	return a, nil
}

// intRanges are the integer attributes and their ranges.
var intRanges = map[string][2]int{
	AttrDelaySeconds:                  {0, MaxDelaySeconds},
	AttrMaximumMessageSize:            {MinMessageSize, MaxMessageSize},
	AttrMessageRetentionPeriod:        {MinRetentionSeconds, MaxRetentionSeconds},
	AttrReceiveMessageWaitTimeSeconds: {0, MaxWaitTimeSeconds},
	AttrVisibilityTimeout:             {0, MaxVisibilitySeconds},
}

func (a *QueueAttributes) set(k, v string) *Error {
	if r, ok := intRanges[k]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < r[0] || n > r[1] {
			return newErr(InvalidAttributeValue, "Invalid value for the parameter %s. Reason: want an integer from %d to %d, got %q.", k, r[0], r[1], v)
		}
		*a.intField(k) = n
		return nil
	}
	switch k {
	case AttrFifoQueue:
		return nil // handled by ParseAttributes
	case AttrRedrivePolicy:
		p, err := parseRedrivePolicy(v)
		a.RedrivePolicy = p
		return err
	case AttrContentBasedDeduplication:
		if !a.FifoQueue {
			return newErr(InvalidAttributeName, "Unknown Attribute ContentBasedDeduplication.")
		}
		b, err := parseBool(k, v)
		a.ContentBasedDeduplication = b
		return err
	case AttrDeduplicationScope:
		return a.setEnum(k, v, &a.DeduplicationScope, ScopeQueue, ScopeMessageGroup)
	case AttrFifoThroughputLimit:
		return a.setEnum(k, v, &a.FifoThroughputLimit, ThroughputPerQueue, ThroughputPerGroupID)
	}
	if slices.Contains(ignoredAttrs, k) {
		return nil
	}
	return newErr(InvalidAttributeName, "Unknown Attribute %s.", k)
}

func (a *QueueAttributes) intField(k string) *int {
	switch k {
	case AttrDelaySeconds:
		return &a.DelaySeconds
	case AttrMaximumMessageSize:
		return &a.MaximumMessageSize
	case AttrMessageRetentionPeriod:
		return &a.MessageRetentionPeriod
	case AttrReceiveMessageWaitTimeSeconds:
		return &a.ReceiveMessageWaitTimeSeconds
	}
	return &a.VisibilityTimeout
}

func (a *QueueAttributes) setEnum(k, v string, dst *string, allowed ...string) *Error {
	if !a.FifoQueue {
		return newErr(InvalidAttributeName, "You can specify the %s only when FifoQueue is set to true.", k)
	}
	if !slices.Contains(allowed, v) {
		return newErr(InvalidAttributeValue, "Invalid value for the parameter %s. Reason: want one of %s, got %q.", k, strings.Join(allowed, ", "), v)
	}
	*dst = v
	return nil
}

func parseBool(k, v string) (bool, *Error) {
	switch {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	}
	return false, newErr(InvalidAttributeValue, "Invalid value for the parameter %s. Reason: want true or false, got %q.", k, v)
}

// parseRedrivePolicy reads {"deadLetterTargetArn": "...", "maxReceiveCount":
// n}; maxReceiveCount may be a number or a string of digits, as AWS
// accepts both. An empty value means no policy.
func parseRedrivePolicy(v string) (*RedrivePolicy, *Error) {
	if v == "" {
		return nil, nil
	}
	bad := func(reason string, args ...any) *Error {
		e := newErr(InvalidParameterValue, "Value %s for parameter RedrivePolicy is invalid. Reason: "+reason, append([]any{v}, args...)...)
		return e
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	if err := dec.Decode(&raw); err != nil || dec.More() {
		return nil, bad("Redrive policy is not a valid JSON map.")
	}
	keys := make([]string, 0, len(raw))
	for k := range raw { // collected, then sorted: the refusal names the same key every time
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if k != "deadLetterTargetArn" && k != "maxReceiveCount" {
			return nil, bad("Only following attributes are supported: [deadLetterTargetArn, maxReceiveCount], got %s.", k)
		}
	}
	var p RedrivePolicy
	arn, ok := raw["deadLetterTargetArn"]
	if !ok || json.Unmarshal(arn, &p.DeadLetterTargetArn) != nil || p.DeadLetterTargetArn == "" {
		return nil, bad("Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
	}
	mrc, ok := raw["maxReceiveCount"]
	if !ok {
		return nil, bad("Redrive policy does not contain mandatory attribute: maxReceiveCount.")
	}
	var s string
	if json.Unmarshal(mrc, &s) != nil {
		s = string(mrc)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > MaxReceiveCountLimit {
		return nil, bad("Invalid value for maxReceiveCount: %s, valid values are from 1 to %d both inclusive.", s, MaxReceiveCountLimit)
	}
	p.MaxReceiveCount = n
	return &p, nil
}

// queueNameFromARN returns the queue name of an ARN in cfg's region and
// account, or false.
func queueNameFromARN(cfg Config, arn string) (string, bool) {
	name, ok := strings.CutPrefix(arn, cfg.ARN(""))
	return name, ok && name != ""
}

package pop

import (
	"fmt"
	"slices"
	"strings"

	pfilter "popsim/filter"
	"popsim/model"
)

// POP-mode queue assignment: RocketMQ's QueryAssignmentProcessor and
// MessageRequestModeManager (docs/rocketmq/clients.md §1). An admin keeps
// a request mode per (topic, group) on the broker (SET_MESSAGE_REQUEST_MODE,
// 401); a push consumer with clientRebalance=false asks the broker for its
// queues at every rebalance (QUERY_ASSIGNMENT, 400) and pops each queue it
// is given. The allocation is a pure function of the topic's route
// (Assign), so that a driver of several brokers answers from the whole
// route while a single Broker answers from its own queues.

// MessageRequestMode is how a group consumes a topic (MessageRequestMode).
type MessageRequestMode string

// The request modes, with RocketMQ's names.
const (
	RequestModePull MessageRequestMode = "PULL"
	RequestModePop  MessageRequestMode = "POP"
)

func (m MessageRequestMode) valid() bool { return m == RequestModePull || m == RequestModePop }

// MessageModel is a consumer group's message model.
type MessageModel string

// The message models.
const (
	Clustering   MessageModel = "CLUSTERING"
	Broadcasting MessageModel = "BROADCASTING"
)

// The allocation strategies QueryAssignmentProcessor registers, by their
// getName(). A push consumer sends its own strategy's name; the broker
// answers any other name with no assignment.
const (
	StrategyAveragely         = "AVG"           // AllocateMessageQueueAveragely, DefaultMQPushConsumer's default
	StrategyAveragelyByCircle = "AVG_BY_CIRCLE" // AllocateMessageQueueAveragelyByCircle
)

// lmqPrefix marks a light message queue topic (MixAll.LMQ_PREFIX), which
// is assigned as one queue (LMQ_QUEUE_ID 0) of the answering broker.
const lmqPrefix = "%LMQ%"

// SetMessageRequestModeRequest is SetMessageRequestModeRequestBody: the
// admin's SET_MESSAGE_REQUEST_MODE, and what the broker stores for the
// (topic, group).
type SetMessageRequestModeRequest struct {
	Topic, ConsumerGroup string
	// Mode is POP or PULL; "" is the body's default, PULL.
	Mode MessageRequestMode
	// PopShareQueueNum: in POP mode each client also pops the queues of
	// this many clients after it in the sorted client list (allocate4Pop);
	// any value is stored (mqadmin setConsumeMode -q, default 0).
	PopShareQueueNum int32
}

// SetMessageRequestModeResult is the response.
type SetMessageRequestModeResult struct {
	Code   model.ResponseCode
	Remark string
}

// modeKey is a (topic, group) of MessageRequestModeManager's table.
type modeKey struct{ topic, group string }

// SetMessageRequestMode is SET_MESSAGE_REQUEST_MODE (401): it stores the
// (topic, group)'s request mode, durably (MessageRequestModeManager
// persists at every set, so a restart keeps it). Upstream refuses a
// %RETRY% topic (NO_PERMISSION), a topic or group the broker does not
// have (TOPIC_NOT_EXIST, SUBSCRIPTION_GROUP_NOT_EXIST), in that order; a
// mode other than POP or PULL is a body that does not decode, answered
// SYSTEM_ERROR (popsim's remark).
func (b *Broker) SetMessageRequestMode(req *SetMessageRequestModeRequest) SetMessageRequestModeResult {
	body := *req
	if body.Mode == "" {
		body.Mode = RequestModePull
	}
	switch {
	case !body.Mode.valid():
		return SetMessageRequestModeResult{Code: model.SystemError, Remark: fmt.Sprintf("mode %q: want POP or PULL", req.Mode)}
	case model.IsRetryTopic(body.Topic):
		return SetMessageRequestModeResult{Code: model.NoPermission, Remark: "retry topic is not allowed to set mode"}
	case b.topicNamed(body.Topic) == nil:
		return SetMessageRequestModeResult{Code: model.TopicNotExist, Remark: "topic[" + body.Topic + "] not exist"}
	case b.groups[body.ConsumerGroup] == nil:
		return SetMessageRequestModeResult{Code: model.SubscriptionGroupNotExist, Remark: "subscription group does not exist"}
	}
	if b.modes == nil {
		b.modes = map[modeKey]SetMessageRequestModeRequest{}
	}
	b.modes[modeKey{body.Topic, body.ConsumerGroup}] = body
	return SetMessageRequestModeResult{Code: model.Success}
}

// MessageRequestMode is the (topic, group)'s stored request mode
// (getMessageRequestMode), false when an admin never set one.
func (b *Broker) MessageRequestMode(topic, group string) (SetMessageRequestModeRequest, bool) {
	m, ok := b.modes[modeKey{topic, group}]
	return m, ok
}

// EffectiveRequestMode is the request mode QUERY_ASSIGNMENT answers with:
// the stored one, else PULL for a %RETRY% topic and
// defaultMessageRequestMode for the others, with defaultPopShareQueueNum
// in POP mode (0, the body's default, in PULL mode).
func (b *Broker) EffectiveRequestMode(topic, group string) SetMessageRequestModeRequest {
	if m, ok := b.MessageRequestMode(topic, group); ok {
		return m
	}
	m := SetMessageRequestModeRequest{Topic: topic, ConsumerGroup: group, Mode: b.cfg.DefaultMessageRequestMode}
	if model.IsRetryTopic(topic) {
		m.Mode = RequestModePull
	}
	if m.Mode == RequestModePop {
		m.PopShareQueueNum = b.cfg.DefaultPopShareQueueNum
	}
	return m
}

// requestModes lists the stored modes sorted by topic, then group (State).
func (b *Broker) requestModes() []SetMessageRequestModeRequest {
	var out []SetMessageRequestModeRequest
	for _, m := range b.modes { // collected, then sorted: order does not matter
		out = append(out, m)
	}
	slices.SortFunc(out, func(x, y SetMessageRequestModeRequest) int {
		if c := strings.Compare(x.Topic, y.Topic); c != 0 {
			return c
		}
		return strings.Compare(x.ConsumerGroup, y.ConsumerGroup)
	})
	return out
}

// MessageQueue is a queue of a topic on a named broker; QueueID -1 in a
// POP assignment means every queue of that broker (an all-queue pop).
type MessageQueue struct {
	Topic, BrokerName string
	QueueID           int32
}

// MessageQueueAssignment is one entry of a QUERY_ASSIGNMENT answer.
type MessageQueueAssignment struct {
	Queue MessageQueue
	Mode  MessageRequestMode
}

// RouteBroker is one broker's part of a topic's route as a client
// subscribes to it (topicRouteData2TopicSubscribeInfo): queues
// 0..ReadQueueNums-1, none when the topic is not readable there.
type RouteBroker struct {
	BrokerName    string
	ReadQueueNums int32
}

// Route is this broker's part of the topic's route: one RouteBroker, with
// no queues when the topic or the broker is not readable; nil when the
// broker does not have the topic.
func (b *Broker) Route(topic string) []RouteBroker {
	t := b.topicNamed(topic)
	if t == nil {
		return nil
	}
	n := t.cfg.ReadQueueNums
	if t.cfg.Perm&PermRead == 0 || !b.cfg.Readable {
		n = 0
	}
	return []RouteBroker{{BrokerName: b.cfg.BrokerName, ReadQueueNums: n}}
}

// QueryAssignmentRequest is QueryAssignmentRequestBody, with the group's
// clients as the broker knows them.
type QueryAssignmentRequest struct {
	Topic, ConsumerGroup, ClientID string
	StrategyName                   string       // AVG or AVG_BY_CIRCLE
	MessageModel                   MessageModel // CLUSTERING or BROADCASTING
	// ClientIDs are the group's connected clients (ConsumerManager's
	// ConsumerGroupInfo, kept by their heartbeats), in any order; nil when
	// the broker has no ConsumerGroupInfo for the group. The broker keeps
	// no client table of its own: its driver says who is connected.
	ClientIDs []string
}

// QueryAssignmentResult is the response. Upstream always answers SUCCESS
// (SYSTEM_ERROR here only for a message model the body cannot carry);
// an answer without an assignment set (Null) tells the client to keep its
// current assignment and try again after a short wait.
type QueryAssignmentResult struct {
	Code   model.ResponseCode
	Remark string
	// Assignments are the client's queues, each with the request mode,
	// sorted by broker name (Java's string order) then queue id.
	Assignments []MessageQueueAssignment
	// Null: no assignment set (upstream's null body field); NullWhy says
	// why, as upstream logs it.
	Null    bool
	NullWhy string
	// Mode is the request mode the answer was made with
	// (EffectiveRequestMode).
	Mode SetMessageRequestModeRequest
}

// QueryAssignment is QUERY_ASSIGNMENT (400) answered from this broker's
// own queues (Route): a single-broker cluster.
func (b *Broker) QueryAssignment(req *QueryAssignmentRequest) QueryAssignmentResult {
	return b.QueryAssignmentRoute(req, b.Route(req.Topic))
}

// QueryAssignmentRoute is QUERY_ASSIGNMENT answered by this broker with
// the topic's whole route (TopicRouteInfoManager's view: the RouteBrokers
// of every broker that has the topic, nil when none has): the request
// mode is this broker's (EffectiveRequestMode), as is
// serverLoadBalancerEnable, and a light message queue topic is this
// broker's one queue.
func (b *Broker) QueryAssignmentRoute(req *QueryAssignmentRequest, route []RouteBroker) QueryAssignmentResult {
	if req.MessageModel != Clustering && req.MessageModel != Broadcasting {
		return QueryAssignmentResult{Code: model.SystemError, Remark: fmt.Sprintf("messageModel %q: want CLUSTERING or BROADCASTING", req.MessageModel)}
	}
	mode := b.EffectiveRequestMode(req.Topic, req.ConsumerGroup)
	if req.MessageModel == Clustering && strings.HasPrefix(req.Topic, lmqPrefix) {
		route = []RouteBroker{{BrokerName: b.cfg.BrokerName, ReadQueueNums: 1}}
	}
	in := AssignInput{
		Topic: req.Topic, Route: route, ClientIDs: req.ClientIDs, ClientID: req.ClientID,
		Mode: mode.Mode, PopShareQueueNum: mode.PopShareQueueNum, Strategy: req.StrategyName,
		MessageModel: req.MessageModel, ServerLoadBalancerEnable: b.cfg.ServerLoadBalancerEnable,
	}
	res := QueryAssignmentResult{Code: model.Success, Mode: mode}
	queues, why := Assign(&in)
	if why != "" {
		res.Null, res.NullWhy = true, why
		return res
	}
	res.Assignments = make([]MessageQueueAssignment, len(queues))
	for i, q := range queues {
		res.Assignments[i] = MessageQueueAssignment{Queue: q, Mode: mode.Mode}
	}
	return res
}

// AssignInput is what QueryAssignmentProcessor.doLoadBalance decides
// with: the topic's route, the group's clients, the asking client, the
// request mode and the client's strategy.
type AssignInput struct {
	Topic string
	// Route: the brokers of the topic and their subscribable queues; nil
	// when the topic has no route.
	Route []RouteBroker
	// ClientIDs: the group's clients in any order (sorted here, as
	// upstream sorts them); nil when the broker has no ConsumerGroupInfo.
	ClientIDs        []string
	ClientID         string
	Mode             MessageRequestMode
	PopShareQueueNum int32
	Strategy         string
	MessageModel     MessageModel
	// ServerLoadBalancerEnable (true): false hands every client every
	// queue of the route (real queue ids) in either mode.
	ServerLoadBalancerEnable bool
}

// Assign is doLoadBalance for one client: the queues assigned to it,
// sorted by broker name then queue id, without repeats (the answer is a
// set). A non-empty why means no assignment at all (upstream's null: no
// route, no ConsumerGroupInfo, an unknown strategy, or an allocation that
// throws); an empty list is an answer ("you have no queues"). In POP mode
// it follows allocate4Pop: popShareQueueNum <= 0 or >= clients-1 gives
// one all-queue MessageQueue (queue -1) per broker; 1..clients-2 gives,
// with no more clients than queues, the client's own share from the
// strategy plus the shares of the popShareQueueNum clients after it in
// the sorted list (wrapping), and otherwise the one queue at the client's
// index modulo the number of queues.
func Assign(in *AssignInput) (queues []MessageQueue, why string) {
	if in.Route == nil {
		return nil, fmt.Sprintf("no assignment for group's topic[%s]: the topic does not exist", in.Topic)
	}
	mqAll := routeQueues(in.Topic, in.Route)
	if in.MessageModel == Broadcasting || !in.ServerLoadBalancerEnable {
		return mqAll, ""
	}
	if in.ClientIDs == nil {
		return nil, "get consumer id list failed"
	}
	cidAll := slices.Clone(in.ClientIDs)
	slices.SortStableFunc(cidAll, pfilter.CompareUTF16)
	alloc, ok := strategies[in.Strategy]
	if !ok {
		return nil, fmt.Sprintf("unsupported strategy [%s]", in.Strategy)
	}
	var res []MessageQueue
	var err error
	if in.Mode == RequestModePop {
		res, err = allocate4Pop(alloc, in.ClientID, mqAll, cidAll, int(in.PopShareQueueNum))
	} else {
		res, err = alloc(in.ClientID, mqAll, cidAll)
	}
	if err != nil {
		return nil, "allocate message queue exception: " + err.Error()
	}
	return distinctSorted(res), ""
}

// routeQueues lists the route's queues sorted as MessageQueue.compareTo
// sorts them: broker name (Java's string order), then queue id.
func routeQueues(topic string, route []RouteBroker) []MessageQueue {
	var mqs []MessageQueue
	for _, r := range route {
		for q := int32(0); q < r.ReadQueueNums; q++ {
			mqs = append(mqs, MessageQueue{Topic: topic, BrokerName: r.BrokerName, QueueID: q})
		}
	}
	slices.SortStableFunc(mqs, compareQueues)
	return mqs
}

func compareQueues(a, b MessageQueue) int {
	if c := pfilter.CompareUTF16(a.BrokerName, b.BrokerName); c != 0 {
		return c
	}
	return int(a.QueueID) - int(b.QueueID)
}

// distinctSorted sorts the queues and drops repeats.
func distinctSorted(mqs []MessageQueue) []MessageQueue {
	slices.SortStableFunc(mqs, compareQueues)
	return slices.Compact(mqs)
}

// allocator is an AllocateMessageQueueStrategy: the client's share of
// the sorted queues among the sorted clients.
type allocator func(clientID string, mqAll []MessageQueue, cidAll []string) ([]MessageQueue, error)

var strategies = map[string]allocator{
	StrategyAveragely:         allocateAveragely,
	StrategyAveragelyByCircle: allocateByCircle,
}

// checkAllocate is AbstractAllocateMessageQueueStrategy.check: an empty
// client id, queue list or client list throws; a client not in the list
// gets nothing (index -1).
func checkAllocate(clientID string, mqAll []MessageQueue, cidAll []string) (int, error) {
	switch {
	case clientID == "":
		return -1, fmt.Errorf("currentCID is empty")
	case len(mqAll) == 0:
		return -1, fmt.Errorf("mqAll is null or mqAll empty")
	case len(cidAll) == 0:
		return -1, fmt.Errorf("cidAll is null or cidAll empty")
	}
	return slices.Index(cidAll, clientID), nil
}

// allocateAveragely is AllocateMessageQueueAveragely: consecutive runs,
// the first q mod n clients one queue more.
func allocateAveragely(clientID string, mqAll []MessageQueue, cidAll []string) ([]MessageQueue, error) {
	index, err := checkAllocate(clientID, mqAll, cidAll)
	if err != nil || index < 0 {
		return nil, err
	}
	q, n := len(mqAll), len(cidAll)
	mod := q % n
	avg := q / n
	switch {
	case q <= n:
		avg = 1
	case mod > 0 && index < mod:
		avg++
	}
	start := index*avg + mod
	if mod > 0 && index < mod {
		start = index * avg
	}
	count := min(avg, q-start)
	if count <= 0 {
		return nil, nil
	}
	return slices.Clone(mqAll[start : start+count]), nil
}

// allocateByCircle is AllocateMessageQueueAveragelyByCircle: every n-th
// queue from the client's index.
func allocateByCircle(clientID string, mqAll []MessageQueue, cidAll []string) ([]MessageQueue, error) {
	index, err := checkAllocate(clientID, mqAll, cidAll)
	if err != nil || index < 0 {
		return nil, err
	}
	var out []MessageQueue
	for i := index; i < len(mqAll); i += len(cidAll) {
		out = append(out, mqAll[i])
	}
	return out, nil
}

// allocate4Pop is QueryAssignmentProcessor.allocate4Pop.
func allocate4Pop(alloc allocator, clientID string, mqAll []MessageQueue, cidAll []string, share int) ([]MessageQueue, error) {
	n := len(cidAll)
	if share <= 0 || share >= n-1 {
		// Every client pops every queue: one all-queue MessageQueue per
		// broker (the answer is a set of (topic, broker, -1)).
		out := make([]MessageQueue, len(mqAll))
		for i, mq := range mqAll {
			out[i] = MessageQueue{Topic: mq.Topic, BrokerName: mq.BrokerName, QueueID: -1}
		}
		return out, nil
	}
	if n > len(mqAll) {
		return allocateOne(clientID, mqAll, cidAll)
	}
	out, err := alloc(clientID, mqAll, cidAll)
	if err != nil {
		return nil, err
	}
	index := slices.Index(cidAll, clientID)
	if index < 0 {
		return out, nil
	}
	for range share {
		index = (index + 1) % n
		more, err := alloc(cidAll[index], mqAll, cidAll)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// allocateOne is allocate4Pop's "make sure each cid is assigned" with
// more clients than queues: the queue at the client's index modulo the
// queue count (QueryAssignmentProcessor.allocate, which checks for a
// blank client id).
func allocateOne(clientID string, mqAll []MessageQueue, cidAll []string) ([]MessageQueue, error) {
	if strings.TrimSpace(clientID) == "" {
		return nil, fmt.Errorf("currentCID is empty")
	}
	index, err := checkAllocate(clientID, mqAll, cidAll)
	if err != nil || index < 0 {
		return nil, err
	}
	return []MessageQueue{mqAll[index%len(mqAll)]}, nil
}

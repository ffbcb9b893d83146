// Package proxy is RocketMQ's proxy between gRPC consumers and one broker
// (package pop): the consumer side of rocketmq-proxy's MessagingService —
// ReceiveMessage, AckMessage, ChangeInvisibleDuration — with its checks,
// its result filter (maxAttempts sends a message to %DLQ%group), and the
// auto-renew of handles being processed (DefaultReceiptHandleManager with
// RenewStrategyPolicy). Names, defaults, limits and gRPC codes are
// RocketMQ's (docs/rocketmq/proxy.md is the reference).
//
// # Contract
//
// Proxy is a single-threaded, clockless state machine like the engines:
// every method takes now from its caller (the proxy's clock), runs to
// completion and returns what happened as values; it starts no goroutine,
// reads no clock, draws no random number and calls back into nothing. Its
// timers (auto-renew) run only when the driver calls Tick at NextDue. It
// knows nothing of a simulator: a gRPC server (or the simulator) drives it.
//
// The proxy answers on its own what it can (an expired receipt handle,
// an invisible time out of range) and otherwise says what to send to the
// broker: ReceiveRequest becomes a pop.PopRequest (PopRequest), an ack a
// pop.AckRequest (Ack), a renewal a pop.ChangeInvisibleTimeRequest
// (Change, and Tick for auto-renew). Receive runs the pop and the result
// filter against the broker itself (Pop), because the filter's send-backs
// and acks are part of answering the receive. A driver that puts a network
// between the proxy and the broker sends the requests it is given and
// reports the answers (Renewed, RenewFailed, Changed); one that does not
// calls the convenience forms (AckMessage, ChangeInvisibleDuration).
//
// # What it models, and what not
//
//   - ReceiveMessage: the polling time from long_polling_timeout or the
//     deadline (remaining − request_timeout/2), clamped to 5..20 s; the
//     invisible time (defaultInvisibleTimeMills for an auto-renewed receive,
//     else 10 s..12 h); the batch clamped to 32; init mode MAX; all queues
//     (queueId −1). The result filter: reconsumeTimes >= maxAttempts goes
//     to %DLQ%group (reconsumeTimes + 1, ORIGIN_MESSAGE_ID, RETRY_TOPIC) and
//     the original is acked; the rest is returned with message id UNIQ_KEY
//     and delivery attempt reconsumeTimes + 1.
//   - AckMessage and ChangeInvisibleDuration: the managed (latest renewed)
//     handle replaces the client's; an expired handle (nextVisibleTime <=
//     now) is INVALID_RECEIPT_HANDLE before anything reaches the broker.
//   - Auto-renew: a managed handle is renewed RenewAheadTime before it
//     expires, for 1, 3, 5, 10, 30, 60, 60 … minutes; after RenewMaxTime one
//     last renewal with the group's retry policy; up to MaxRenewRetryTimes
//     failed attempts; a non-OK answer stops it. A successful client renewal
//     of a managed handle replaces it (the fix of apache/rocketmq#9583, whose
//     upstream behaviour keeps renewing the stale handle), but only in the
//     registration it was made from (Target.Entry): an answer arriving after
//     a later delivery of the message was registered leaves that delivery's
//     handle alone (upstream takes the registration out when the renewal
//     is sent, so the answer cannot reach a later one).
//   - The result filter's tag check (FilterUtils.isTagMatched) comes
//     first: the broker compares tag hash codes, so a message whose tag
//     only collides with a subscribed one ("Aa" and "BB") is popped; the
//     proxy answers it NO_MATCH and acks it (Forwarded with NoMatch). The
//     receive's subscription is built as FilterAPI.build does it, and
//     ILLEGAL_FILTER_EXPRESSION when it does not build.
//   - Not modelled: the 5 s renew scan (renewals fire exactly RenewAheadTime
//     ahead), clearing a gone client's handles to 1 s (Forget drops them),
//     batch acks, FIFO, route selection, name validation.
//
// # Usage
//
//	px := proxy.New(broker, proxy.DefaultConfig())
//	preq, st := px.PopRequest(now, &proxy.ReceiveRequest{ClientID: "c1", Group: "g", Topic: "t",
//		BatchSize: 16, InvisibleTime: 30 * clock.Second, LongPollingTimeout: 20 * clock.Second,
//		Timeout: 30 * clock.Second, MaxAttempts: 17})
//	var res proxy.ReceiveResult
//	px.Pop(now, &preq, 17, &res) // res.Pop: the broker's answer, filtered; res.Forwarded: sent to the DLQ
//	m := &res.Pop.Messages[0]
//	px.Manage(now, "c1", "g", m)                              // auto-renew it while it is processed
//	st = px.AckMessage(now, &proxy.AckRequest{ClientID: "c1", Group: "g", Topic: "t", Handle: m.Handle, MessageID: m.Message.UniqKey})
//	if t, ok := px.NextDue(); ok { rs := px.Tick(t, nil) /* send rs[i].Request, then Renewed */ }
package proxy

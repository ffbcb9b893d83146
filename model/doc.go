// Package model is popsim's shared vocabulary: messages and their RocketMQ
// properties, the in-flight record (PopConsumerRecord) and its store key,
// receipt handles (the extraInfo / POP_CK string), the pop response's offset
// info strings, RocketMQ's numeric response codes, retry / DLQ topic
// names, and the checkpoint path's revive-topic payloads (PopCheckPoint,
// AckMsg, BatchAckMsg) with their JSON form and merge keys.
//
// It has no behaviour beyond encode, decode and validate, and imports only
// the standard library and popsim/clock. Every type that appears in traces or
// scripted tests has a deterministic String.
//
// Byte layouts and names follow Apache RocketMQ 5 exactly (see
// docs/rocketmq/kv-path.md §2.1, docs/rocketmq/proxy.md and codes.md), so that a
// receipt handle printed by popsim could have come from a real broker:
//
//	h, err := model.ParseReceiptHandle("64 1666860736757 60000 4 0 broker-a 0 110")
//	if err != nil { ... }           // malformed input is an error, never a panic
//	deadline := h.NextVisibleTime() // popTime + invisibleTime, in ms
//
// ParseReceiptHandleInto is the same decoder without allocation, for hot
// paths (the engine's ack and changeInvisibleTime, the checker).
package model

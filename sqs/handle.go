package sqs

import (
	"encoding/binary"
	"hash/fnv"
	"strconv"
	"strings"

	"popsim/model"
)

// ReceiptHandle is the content of a receipt handle: the queue, the
// message's position in it and the lease (receive) it came from. Its
// string form is "<queue>:<seq>:<lease>:<tag>", tag being eight hex digits
// of FNV-1a over the service's HandleSalt and the three fields, so a
// handle is deterministic, unique per receive, and a forged or mistyped
// one is rejected. AWS's handles are opaque; the engine's are readable on
// purpose, for traces.
type ReceiptHandle struct {
	Queue string
	Seq   int64
	Lease model.LeaseID
	Tag   uint32
}

// NewReceiptHandle returns the handle of lease on the message at seq in
// queue, tagged with salt.
func NewReceiptHandle(salt uint64, queue string, seq int64, lease model.LeaseID) ReceiptHandle {
	return ReceiptHandle{Queue: queue, Seq: seq, Lease: lease, Tag: handleTag(salt, queue, seq, lease)}
}

func handleTag(salt uint64, queue string, seq int64, lease model.LeaseID) uint32 {
	h := fnv.New32a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], salt)
	binary.LittleEndian.PutUint64(b[8:], uint64(seq))
	binary.LittleEndian.PutUint64(b[16:], uint64(lease))
	h.Write(b[:])
	h.Write([]byte(queue))
	return h.Sum32()
}

// Valid reports whether the tag matches the other fields under salt.
func (h ReceiptHandle) Valid(salt uint64) bool {
	return h.Tag == handleTag(salt, h.Queue, h.Seq, h.Lease)
}

func (h ReceiptHandle) String() string {
	b := make([]byte, 0, len(h.Queue)+40)
	b = append(b, h.Queue...)
	b = append(b, ':')
	b = strconv.AppendInt(b, h.Seq, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(h.Lease), 10)
	b = append(b, ':')
	const hex = "0123456789abcdef"
	for i := 28; i >= 0; i -= 4 {
		b = append(b, hex[(h.Tag>>uint(i))&0xf])
	}
	return string(b)
}

// ParseReceiptHandle parses the string form. It checks the syntax only;
// the service checks the tag, the queue and the lease.
func ParseReceiptHandle(s string) (ReceiptHandle, bool) {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return ReceiptHandle{}, false
	}
	rest := s[i+1:]
	parts := strings.Split(rest, ":")
	if len(parts) != 3 || len(parts[2]) != 8 {
		return ReceiptHandle{}, false
	}
	seq, err1 := strconv.ParseInt(parts[0], 10, 64)
	lease, err2 := strconv.ParseUint(parts[1], 10, 64)
	tag, err3 := strconv.ParseUint(parts[2], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || seq < 1 || lease < 1 {
		return ReceiptHandle{}, false
	}
	h := ReceiptHandle{Queue: s[:i], Seq: seq, Lease: model.LeaseID(lease), Tag: uint32(tag)}
	return h, h.String() == s // canonical form only: no signs, leading zeros or upper-case hex
}

package sqs

import (
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
	// FNV-1a, 32 bits, over salt, seq and lease (little-endian) and the
	// queue name, written out to stay allocation-free.
	const offset, prime = 2166136261, 16777619
	h := uint32(offset)
	for _, v := range [3]uint64{salt, uint64(seq), uint64(lease)} {
		for i := 0; i < 8; i++ {
			h = (h ^ uint32(byte(v>>(8*i)))) * prime
		}
	}
	for i := 0; i < len(queue); i++ {
		h = (h ^ uint32(queue[i])) * prime
	}
	return h
}

// Valid reports whether the tag matches the other fields under salt.
func (h ReceiptHandle) Valid(salt uint64) bool {
	return h.Tag == handleTag(salt, h.Queue, h.Seq, h.Lease)
}

func (h ReceiptHandle) String() string {
	var buf [128]byte
	return string(h.appendTo(buf[:0]))
}

func (h ReceiptHandle) appendTo(b []byte) []byte {
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
	return b
}

// ParseReceiptHandle parses the string form. It checks the syntax only;
// the service checks the tag, the queue and the lease.
func ParseReceiptHandle(s string) (ReceiptHandle, bool) {
	// queue:seq:lease:tag, the queue name holding no colon.
	var f [4]string
	rest := s
	for i := 0; i < 3; i++ {
		j := strings.IndexByte(rest, ':')
		if j < 0 {
			return ReceiptHandle{}, false
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	f[3] = rest
	if f[0] == "" || len(f[3]) != 8 {
		return ReceiptHandle{}, false
	}
	seq, err1 := strconv.ParseInt(f[1], 10, 64)
	lease, err2 := strconv.ParseUint(f[2], 10, 64)
	tag, err3 := strconv.ParseUint(f[3], 16, 32)
	if err1 != nil || err2 != nil || err3 != nil || seq < 1 || lease < 1 {
		return ReceiptHandle{}, false
	}
	h := ReceiptHandle{Queue: f[0], Seq: seq, Lease: model.LeaseID(lease), Tag: uint32(tag)}
	// Canonical form only: no signs, leading zeros or upper-case hex.
	var buf [128]byte
	return h, string(h.appendTo(buf[:0])) == s
}

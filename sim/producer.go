package sim

import (
	"strconv"

	"popsim/clock"
	"popsim/model"
	"popsim/workload"
	"popsim/workload/pcg"
)

// producer sends messages at the instants its arrival process yields. The
// schedule is open loop: a message's BornTimestamp and its latency origin
// are the intended send time, whatever happens downstream.
type producer struct {
	idx    int32
	topic  string
	queues int32
	tags   workload.Tags
	props  workload.Properties
	arr    workload.Arrivals
	rng    *pcg.Rand
	seq    int64
	next   int32 // round-robin queue
	random bool  // pick queues uniformly at random instead
	prefix string
	key    []byte // scratch for building UNIQ_KEYs
	// keys holds the UNIQ_KEYs of the next keyBlock messages, concatenated
	// (keyEnds: where each ends; keyAt: the next one's index), so that a
	// message's key is a substring of it: one string per keyBlock
	// messages instead of one per message.
	keys    string
	keyEnds [keyBlock]int32
	keyAt   int
	// digits is the decimal form of number digitsOf, the first message of
	// the next block (fillKeys), so that the keys count on across blocks
	// without formatting a number.
	digits   []byte
	digitsOf int64
	// groups are the groups consuming its topic (s.onTopic's entry, set
	// once subscribe placed them), for the messages it stores.
	groups []*group
}

// keyBlock is how many UNIQ_KEYs a producer builds at once: a string of
// ~2.5 kB for 256 messages (the default scenario's 30 000 messages make
// 118 of them).
const keyBlock = 256

// nextKey returns the UNIQ_KEY of message p.seq: p<producer>-<seq>.
func (p *producer) nextKey() string {
	if p.keyAt == 0 || p.keyAt == keyBlock {
		p.fillKeys()
	}
	from := int32(0)
	if p.keyAt > 0 {
		from = p.keyEnds[p.keyAt-1]
	}
	k := p.keys[from:p.keyEnds[p.keyAt]]
	p.keyAt++
	return k
}

// fillKeys builds the keys of messages p.seq to p.seq+keyBlock-1: each
// the key before it with its number's digits counted up one in place
// (incDigits), one copy a key where formatting the number took ~100
// instructions and appending the prefix and the digits two copies.
func (p *producer) fillKeys() {
	if p.digits == nil || p.digitsOf != p.seq {
		p.digits = strconv.AppendInt(p.digits[:0], p.seq, 10)
	}
	k := append(append(p.key[:0], p.prefix...), p.digits...)
	p.keyEnds[0] = int32(len(k))
	from, plen := 0, len(p.prefix)
	for i := 1; i < keyBlock; i++ {
		end := len(k)
		k = incDigits(append(k, k[from:end]...), end+plen)
		p.keyEnds[i] = int32(len(k))
		from = end
	}
	p.digits = incDigits(append(p.digits[:0], k[from+plen:]...), 0)
	p.key, p.keys, p.keyAt = k, string(k), 0
	p.digitsOf = p.seq + keyBlock
}

// incDigits adds one to the number whose decimal digits (no sign, no
// leading zeros) are b[from:], the end of b, and returns b with the new
// number's digits, in b's storage when they fit.
func incDigits(b []byte, from int) []byte {
	for i := len(b) - 1; i >= from; i-- {
		if b[i] != '9' {
			b[i]++
			return b
		}
		b[i] = '0'
	}
	// every digit was a 9 and is now a 0: one digit more
	b[from] = '1'
	return append(b, '0')
}

// putReq is a message on its way to the engine.
type putReq struct {
	p        *producer
	msg      *model.Message
	intended clock.Time
	// own holds msg when the engine stores a copy of what it is given
	// (copyingStore): the message then needs no allocation of its own and
	// is recycled with its putReq.
	own model.Message
}

// copyingStore is an engine whose Store keeps a copy of the message it is
// given, never the pointer, so the caller may reuse the message after the
// call.
type copyingStore interface{ storesCopies() bool }

func (s *sim) newProducer(idx int32, spec *ProducerSpec) *producer {
	return &producer{
		idx: idx, topic: spec.Topic, queues: s.rt.queues(spec.Topic), tags: spec.Tags, props: spec.Properties, arr: spec.Arrivals.New(),
		rng: newStream(s.cfg.Seed, streamProducer+uint64(idx)), prefix: "p" + strconv.Itoa(int(idx)) + "-",
		random: spec.QueueSelect == QueueRandom,
	}
}

// scheduleArrival asks the arrival process for the next send instant;
// producers stop at the end of the safety phase.
func (s *sim) scheduleArrival(p *producer) {
	at, ok := p.arr.Next(p.rng, s.q.now())
	if !ok || at >= s.safetyEnd {
		return
	}
	s.q.at(max(at, s.q.now()), tkProduce, p.idx, 0, nil)
}

// produce sends one message: UNIQ_KEY p<producer>-<seq>, queues round
// robin (or random), a weighted tag, a weighted set of properties (drawn
// only when the producer has some), BornTimestamp = the intended send time.
func (s *sim) produce(p *producer) {
	now := s.q.now()
	if p.random {
		p.next = p.rng.Int32N(p.queues)
	}
	r := s.newPutReq(p, now)
	m := r.msg // empty: set field by field, not built aside and copied
	m.Topic, m.QueueID, m.BornTimestamp = p.topic, p.next, now.Millis()
	m.UniqKey = p.nextKey()
	m.Tags = p.tags.Pick(p.rng)
	m.Properties = p.props.Pick(p.rng)
	p.seq++
	p.next = (p.next + 1) % p.queues
	s.q.after(s.reqLat.Sample(s.netRng), tkPut, p.idx, 0, r)
	s.scheduleArrival(p)
}

// newPutReq returns a putReq with room for its message, an empty one,
// reusing one that put has finished with (recyclePut cleared it). The
// message is the putReq's own when the engine stores copies
// (copyingStore), else a new one the engine may keep. It inlines (cost
// 60), its take from the free list written out, as newPop's
// (BenchmarkRunDefault: 1 394.7 -> 1 394.1 M instructions outside the
// runtime, hot topic 576.8 -> 576.5 M, callgrind).
func (s *sim) newPutReq(p *producer, intended clock.Time) *putReq {
	var r *putReq
	if n := len(s.freePuts) - 1; n >= 0 { // takeFree
		r = s.freePuts[n]
		s.freePuts[n], s.freePuts = nil, s.freePuts[:n]
	} else {
		r = new(putReq)
	}
	// Its fields one by one: produce writes the whole message next, so
	// clearing the putReq (its own message with it) first is wasted.
	r.p, r.intended = p, intended
	if s.engCopies {
		r.msg = &r.own
	} else {
		r.msg = new(model.Message)
	}
	return r
}

// put stores a message at the engine, which wakes long-polling pops and
// held pulls. Only its tkPut task referred to r: it is recycled.
func (s *sim) put(r *putReq) {
	if len(s.brks) > 0 {
		b, _ := s.rt.split(r.msg.Topic, r.msg.QueueID)
		s.brks[b].putMessage(r) // it waits for a thread and a core
		return
	}
	s.storeOnly(r.p, r.msg, r.intended) // store's two calls, without its own
	s.settle(&s.out)
	s.recyclePut(r)
}

// recyclePut keeps r, cleared, for newPutReq (which takes its message
// as empty).
func (s *sim) recyclePut(r *putReq) {
	*r = putReq{}
	s.freePuts = append(s.freePuts, r)
}

// storeOnly gives the message its id (1, 2, 3 … in the order messages
// reach the engine; every copy the engine makes keeps it), stores it and
// leaves the engine's effects in s.out, for the caller to settle.
func (s *sim) storeOnly(p *producer, m *model.Message, intended clock.Time) {
	m.ID = s.nextMsg
	s.nextMsg++
	if s.eng.Store(s.q.now(), p.idx, m, &s.out) {
		s.stored(s.groupsOf(p, m), m, intended)
	}
}

// groupsOf is the groups consuming m's topic: for a message on p's topic,
// all p produces, the ones p keeps, without looking the topic's name up
// in s.onTopic (a string-keyed map: ~130 instructions a message).
func (s *sim) groupsOf(p *producer, m *model.Message) []*group {
	if m.Topic == p.topic {
		return p.groups
	}
	return s.onTopic[m.Topic]
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

package sim

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"popsim/model"
	"popsim/sim/check"
)

// TraceError is a line of a saved trace that does not read back.
type TraceError struct {
	Line int // 1-based
	Err  error
}

func (e *TraceError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *TraceError) Unwrap() error { return e.Err }

// CheckTrace judges a saved text trace (as RunOptions.TraceWriter and
// popsim run -trace write it) with the checker, offline: the same verdict
// the run gave. What the checker needs at the end comes from the trace
// itself: whether the run drained (its last phase event: done or
// undrained) and each group's commit lags (per queue of the group's topic
// and of its retry topics, the queue's end, one past the highest offset a
// produce or a revive copy was written at, less the last commit offset
// traced). A line that does not read back stops the check with a
// *TraceError naming it; events are judged in the order they come.
func CheckTrace(r io.Reader, opts check.Options) (check.Report, int64, error) {
	chk := check.New(opts)
	f := newFinalFromTrace()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var n int64
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		e, err := model.ParseEvent(text)
		if err != nil {
			return check.Report{}, n, &TraceError{Line: line, Err: err}
		}
		f.observe(&e)
		chk.Observe(&e)
		n++
	}
	if err := sc.Err(); err != nil {
		return check.Report{}, n, err
	}
	if n == 0 {
		return check.Report{}, 0, &TraceError{Line: 1, Err: fmt.Errorf("the trace is empty: want one event per line, as popsim run -trace writes it")}
	}
	return chk.Finish(f.final()), n, nil
}

// finalFromTrace gathers the end-of-run facts a trace carries.
type finalFromTrace struct {
	groups  []string          // in subscribe order
	topicOf map[string]string // group -> its topic
	ends    map[queueRef]int64
	commits map[commitKey]int64
	drained bool
}

type queueRef struct {
	topic string
	queue int32
}

func newFinalFromTrace() *finalFromTrace {
	return &finalFromTrace{topicOf: map[string]string{}, ends: map[queueRef]int64{}, commits: map[commitKey]int64{}}
}

func (f *finalFromTrace) observe(e *model.Event) {
	switch e.Kind {
	case model.EvSubscribe:
		if _, ok := f.topicOf[e.Group]; !ok {
			f.groups = append(f.groups, e.Group)
			f.topicOf[e.Group] = e.Topic
		}
	case model.EvProduce, model.EvRevive:
		k := queueRef{e.Topic, e.Queue}
		f.ends[k] = max(f.ends[k], e.Offset+1)
	case model.EvCommit:
		f.commits[commitKey{e.Group, e.Topic, e.Queue}] = e.Offset
	case model.EvPhase:
		f.drained = e.Reason == model.RDone
	}
}

// final is check.Final as the run computed it: lags in group, topic (the
// group's, then its V1 and V2 retry topics) and queue order.
func (f *finalFromTrace) final() check.Final {
	var lags []check.QueueLag
	for _, g := range f.groups {
		t := f.topicOf[g]
		for _, topic := range [...]string{t, model.BuildPopRetryTopicV1(t, g), model.BuildPopRetryTopicV2(t, g)} {
			top := int32(-1)
			for k := range f.ends { // the largest queue id only: order does not matter
				if k.topic == topic {
					top = max(top, k.queue)
				}
			}
			for q := int32(0); q <= top; q++ {
				end := f.ends[queueRef{topic, q}]
				lags = append(lags, check.QueueLag{Group: g, Topic: topic, Queue: q, Lag: end - max(f.commits[commitKey{g, topic, q}], 0)})
			}
		}
	}
	return check.Final{CommitLag: lags, Drained: f.drained}
}

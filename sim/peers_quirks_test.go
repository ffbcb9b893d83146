package sim

// The quirks users of each peer system run into (the peers' "what users
// complain about"), where they are behaviour rather than bugs: each test
// builds the smallest workload that shows one and checks that the run
// shows it, with every invariant holding.

import (
	"bytes"
	"testing"

	"popsim/clock"
	"popsim/model"
	"popsim/sim/check"
)

// quirkConfig is one group of consumers on one topic, on the given engine.
func quirkConfig(engine EngineSpec, queues int32, arrive, processing string, consumers int, settings ConsumerSettings) Config {
	return Config{
		Seed:      1,
		Topics:    []TopicSpec{{Name: "orders", Queues: queues}},
		Producers: []ProducerSpec{{Topic: "orders", Arrivals: arrivals(arrive)}},
		Consumers: []ConsumerSpec{{Group: "billing", Topic: "orders", Count: consumers, Threads: 1,
			Processing: dist(processing), Outcomes: outcomes("outcomes(reconsume_later=0,exception=0)"), Settings: settings}},
		Engine:   engine,
		Duration: 20 * clock.Second, Drain: 10 * clock.Minute, EventBudget: 5_000_000,
	}
}

func runQuirk(t *testing.T, cfg Config, opts RunOptions) *Result {
	t.Helper()
	r, err := Run(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Summary.Violations; len(v) > 0 {
		t.Fatalf("%d violation(s), first %s: %s", len(v), v[0].Invariant, v[0].Detail)
	}
	return r
}

// Kafka: a record that takes long to process holds the share-partition's
// start offset, and once group.share.partition.max.record.locks records
// past it are in flight the partition lends nothing more, however many
// consumers are idle; the run's summary says it hit the limit.
func TestQuirkKafkaStuckHeadFillsTheWindow(t *testing.T) {
	set := DefaultKafkaShareSettings()
	set.PartitionMaxRecordLocks = 100
	cfg := quirkConfig(EngineSpec{Kind: KafkaShare, Settings: set}, 1, "poisson(200/s)",
		"mix(0.998:const(1ms),0.002:const(10s))", 4, &KafkaShareConsumerSettings{})
	r := runQuirk(t, cfg, RunOptions{})
	var hit *model.LimitHit
	for i, l := range r.Summary.LimitsHit {
		if l.Limit == "group.share.partition.max.record.locks" {
			hit = &r.Summary.LimitsHit[i]
		}
	}
	if hit == nil || hit.Count == 0 || hit.Value != 100 {
		t.Fatalf("limits hit %+v: want group.share.partition.max.record.locks 100 counted", r.Summary.LimitsHit)
	}
	if p99 := clock.Duration(r.Summary.EndToEnd.P99); p99 < clock.Second {
		t.Errorf("end-to-end p99 %v: want the stall (records waiting behind a 10 s head) to show", p99.Std())
	}
}

// SQS FIFO: while a message of a group is in flight, no other message of
// that group is received, so one slow message delays every message behind
// it in its group; a standard queue lends them to the idle consumers.
func TestQuirkSQSFIFOGroupBlockedByInFlightMessage(t *testing.T) {
	const processing = "mix(0.99:const(1ms),0.01:const(5s))"
	std := quirkConfig(EngineSpec{Kind: SQSStandard, Settings: DefaultSQSStandardSettings()}, 1, "poisson(50/s)", processing, 4, DefaultSQSConsumerSettings())
	fifo := quirkConfig(EngineSpec{Kind: SQSFIFO, Settings: DefaultSQSFIFOSettings()}, 1, "poisson(50/s)", processing, 4, DefaultSQSConsumerSettings())
	s, f := runQuirk(t, std, RunOptions{}), runQuirk(t, fifo, RunOptions{})
	sp50, fp50 := clock.Duration(s.Summary.EndToEnd.P50), clock.Duration(f.Summary.EndToEnd.P50)
	if sp50 > 100*clock.Millisecond || fp50 < 10*sp50 {
		t.Errorf("end-to-end p50: standard %v, FIFO %v: want FIFO's one group to queue behind its slow messages", sp50.Std(), fp50.Std())
	}
}

// SQS: a visibility timeout shorter than the processing time makes the
// message visible again while it is still being processed, so a second
// consumer receives it and both process it: a duplicate by lease expiry.
// (A message whose every processing outlasts the timeout is never deleted:
// the first receiver's DeleteMessage names a stale receipt handle. Here
// 30 % of processings are slow.)
func TestQuirkSQSVisibilityShorterThanProcessing(t *testing.T) {
	set := DefaultSQSStandardSettings()
	set.VisibilityTimeout = 1
	cfg := quirkConfig(EngineSpec{Kind: SQSStandard, Settings: set}, 1, "backlog(20)", "mix(0.3:const(1500ms),0.7:const(10ms))", 4, DefaultSQSConsumerSettings())
	r := runQuirk(t, cfg, RunOptions{})
	if r.Summary.DuplicatesByCause["lease_expiry"] == 0 {
		t.Errorf("duplicates by cause %v: want lease_expiry duplicates", r.Summary.DuplicatesByCause)
	}
}

// SQS short polling (WaitTimeSeconds 0) samples a subset of the queue's
// servers, so a receive can come back empty although messages are
// waiting, and an idle consumer spins on empty receives; long polling
// (20 s) asks every server and waits instead.
func TestQuirkSQSShortPollingEmptyReceives(t *testing.T) {
	empties := func(wait int) (empty, receives int) {
		set := DefaultSQSConsumerSettings()
		set.WaitTimeSeconds = wait
		cfg := quirkConfig(EngineSpec{Kind: SQSStandard, Settings: DefaultSQSStandardSettings()}, 1, "poisson(5/s)", "const(1ms)", 2, set)
		cfg.Duration = 5 * clock.Second
		r := runQuirk(t, cfg, RunOptions{KeepEvents: true})
		for _, e := range r.Events {
			if e.Kind == model.EvReceived {
				receives++
				if e.Count == 0 {
					empty++
				}
			}
		}
		return empty, receives
	}
	se, sr := empties(0)
	le, lr := empties(20)
	if se < 10*max(le, 1) || sr < 10*lr {
		t.Errorf("short polling: %d empty of %d receives; long polling: %d empty of %d: want short polling to spin on empty receives", se, sr, le, lr)
	}
	t.Logf("short polling: %d empty of %d receives; long polling: %d empty of %d", se, sr, le, lr)
}

// SQS through an AWS SDK: a DeleteMessage with no answer is retried in
// the SDK's standard mode, up to 3 attempts in all, each after the
// request timeout and a full-jitter backoff below 2^i s, so a lost delete
// is a duplicate only when all three attempts are lost (0.2³ here, not
// 0.2).
func TestSQSSDKRetriesLostDeleteMessage(t *testing.T) {
	cfg := quirkConfig(EngineSpec{Kind: SQSStandard, Settings: DefaultSQSStandardSettings()}, 1, "poisson(100/s)", "const(1ms)", 2, DefaultSQSConsumerSettings())
	cfg.Network.Loss.Ack = LossPair{Request: 200_000}
	r := runQuirk(t, cfg, RunOptions{KeepEvents: true})
	timeout := 3 * clock.Second // the network's default RequestTimeout
	acks := map[model.LeaseID]int{}
	lostAt := map[model.LeaseID]clock.Time{}
	retries := 0
	for _, e := range r.Events {
		switch e.Kind {
		case model.EvAck:
			acks[e.Lease]++
			if at, ok := lostAt[e.Lease]; ok {
				retries++
				n := acks[e.Lease] - 1 // the attempt that was lost
				if gap := e.At.Sub(at); gap < timeout || gap >= timeout+clock.Second<<n {
					t.Fatalf("lease %d: attempt %d %v after attempt %d was lost: want the request timeout %v plus a backoff below %v", e.Lease, n+1, gap.Std(), n, timeout.Std(), (clock.Second << n).Std())
				}
				delete(lostAt, e.Lease)
			}
		case model.EvAckLost:
			lostAt[e.Lease] = e.At
		}
	}
	for l, n := range acks {
		if n > sdkMaxAttempts {
			t.Fatalf("lease %d: %d DeleteMessage attempts, want at most %d", l, n, sdkMaxAttempts)
		}
	}
	produced, dup := r.Summary.Produced, r.Summary.DuplicatesByCause["ack_lost"]
	if retries < int(produced)/10 || dup*50 > produced {
		t.Errorf("%d retries, %d ack_lost duplicates of %d produced: want about a fifth retried and under 2 %% (0.8 %%) duplicated", retries, dup, produced)
	}
	t.Logf("%d produced, %d retries, %d ack_lost duplicates", produced, retries, dup)
}

// Kafka: when the share-group state write that archives a record fails,
// the broker goes on from its cached state (the share-partition start
// offset moves past the record), but a restart reloads the last state the
// share coordinator kept and lends the record again. The commit offset the
// checker is told of is the durable one (share's DurableStart), so the
// record's place is still known when it comes back; every invariant holds.
func TestQuirkKafkaLostStateWriteRedeliversAfterRestart(t *testing.T) {
	c := &peerCase{}
	k, p := &c.knobs, &c.peer
	p.engine, p.lockMs, p.deliveryLimit, p.maxLocks, p.mode, p.exceptionAck, p.acquire, p.exception = KafkaShare, 15000, 2, 100, "explicit", "release", "batch_optimized", "0"
	k.consumers, k.threads, k.batch, k.processing, k.reconsume = 1, 1, 1, "const(5ms)", "0.1"
	k.messages, k.arrivals, k.queues, k.restart, k.seed, k.drain = 20, "backlog(20)", 1, clock.Second, 2, propDrain
	c.sched = Schedule{
		{At: 0, Kind: FaultLoss, Loss: "ack", Response: true, For: 100 * clock.Millisecond},
		{At: 20 * clock.Millisecond, Kind: FaultRevivePutFailure, For: 15 * clock.Second},
		{At: 16 * clock.Second, Kind: FaultBrokerRestart},
	}
	var text bytes.Buffer
	r, err := RunScheduled(c.config(), c.sched, RunOptions{KeepEvents: true, TraceWriter: &text})
	if err != nil {
		t.Fatal(err)
	}
	noViolations(t, r)
	// The saved trace alone (popsim check) agrees: its traced commit
	// offsets, the durable ones, still converge once the run drained.
	rep, _, err := CheckTrace(&text, check.Options{})
	if err != nil || len(rep.Violations) > 0 {
		t.Fatalf("popsim check of the trace: err %v, violations %v", err, rep.Violations)
	}
	var archived, again bool
	for _, e := range r.Events {
		switch {
		case e.Kind == model.EvDeadLetter && e.Msg == 1:
			archived = true
		case e.Kind == model.EvLease && e.Msg == 1 && archived && e.At > clock.Epoch.Add(16*clock.Second):
			again = true
		}
	}
	if !archived || !again {
		t.Fatalf("message 1 archived %v, lent again after the restart %v: want both", archived, again)
	}
}

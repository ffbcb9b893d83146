// Package scenarios is popsim's scenario files: a commented YAML format
// for a simulation, its strict loader, a library of built-in scenarios
// embedded in the binary, sweep parameters, and the queueing theory the
// simulator is validated against.
//
// The file format is sim.Config itself: the decoder walks the YAML onto
// it, a key being its field's Go name in lower camel case (a yaml tag
// only where RocketMQ's name differs), and every value with a text form
// (durations, distributions, arrival processes, outcomes, tags, properties,
// probabilities) is parsed by its own type, once. The package owns the
// strict decoding (unknown, misspelt or repeated keys, a key of another
// consumer or engine kind, wrong kinds of value) and the file's header
// (name, description, seeds); ranges, references between sections and
// relations between fields are sim.Config.Validate's, whose field errors
// it places at the line their key was written:
//
//	scenarios/x.yaml:12: consumers[0].batch: 40 out of range: want 1..32
//
// It must not run simulations itself outside tests (cmd/popsim does), and
// it must never panic on input (FuzzLoad).
//
// # Usage
//
//	s, err := scenarios.Builtin("default", scenarios.Override{Path: "duration", Value: "5s"})
//	s, err := scenarios.LoadFile("my.yaml")
//	res, err := sim.Run(s.Config(seed), sim.RunOptions{Scenario: s.Name})
//
// # File format
//
// One YAML document per file. Durations are Go durations with microsecond
// resolution (250ms, 30s, 2m); probabilities are decimals (0.001) or
// percentages (0.1%); rates, arrival processes, distributions, outcomes,
// tags and properties use package workload's text forms. Inside {flow:
// mappings} and [flow, lists] quote values that contain commas:
// "uniform(1s,5s)". Keys left out take the default shown.
//
//	name: default                 # required: [a-z0-9-], the run folder's name
//	description: |                # first line: what `popsim list` prints
//	seed: 1                       # `popsim run` without -seed
//	seeds: 1..20                  # sweeps, plans, tests (default: seed); also "1,5,9" or "1..4,9"
//	duration: 60s                 # safety phase: production and faults (1ms..720h)
//	warmup: auto                  # not measured: auto (default, MSER-5 finds the transient) or a fixed duration < duration
//	drain: 10m                    # liveness budget: faults off, all must settle (1s..720h; extended while retrying, up to the retry chain)
//	eventBudget: 200000000        # the run fails naming this bound past it
//	sampleInterval: 1s            # time-series resolution (10ms..duration+drain)
//
//	topics:                       # at least one
//	  - name: orders              # RocketMQ topic name, not starting with %
//	    queues: 8                 # 1..1024 (default 8)
//	groups:                       # optional; when given, every consumer's group must be one of them;
//	  - name: billing             # a group not listed gets RocketMQ's defaults
//	    retryMaxTimes: 16         # 1..64; the proxy's maxAttempts is this + 1
//	    consumeMessageOrderly: false  # orderly (FIFO): pop-push and simple consumers pop with order=true
//	    requestMode: ""           # rocketmq: pop or pull, set on the broker before the run (SET_MESSAGE_REQUEST_MODE); "": none set
//	    popShareQueueNum: 0       # with requestMode pop: each client also pops the next N clients' queues (any int)
//	    switchToPop: {at: 30s, popShareQueueNum: 0}  # rocketmq: the admin switches the group from PULL to POP at
//	                              #   that time (1ms..duration-1ms) on every broker; the group must start in PULL mode,
//	                              #   its consumers pop-push with clientRebalance: false, not orderly; each moves at
//	                              #   its next rebalance (docs/rocketmq/clients.md §4); back to PULL is refused
//	                              #   (switchToPull: not modelled, clients.md §4.1.1)
//	producers:                    # at least one; each topic needs a consuming group (rocketmq: any number; others: one)
//	  - topic: orders
//	    arrivals: poisson(1000/s) # const(R), poisson(R), onoff(rate=,on=,off=), ramp(from=,to=,over=), backlog(N), limit(P,count=,for=)
//	    tags: tags(TagA:3,TagB:1) # default: no tag
//	    count: 1                  # identical producers, 1..1000
//	    queueSelect: round-robin  # or random: each queue then sees a Poisson stream
//	    properties: properties(3:set(region=eu,amount=250),1:set())   # user properties per message, a weighted
//	                              # choice of sets (names: SQL92 identifiers, not RocketMQ's own); default: none
//	consumers:                    # at least one; a group has one kind and one topic
//	  - kind: pop-push            # pop-push | simple | pull
//	    group: billing
//	    topic: orders
//	    expression: "*"           # the subscription; on rocketmq a message it does not match is owed to no one in the group
//	    expressionType: TAG       # TAG (* or tags joined by ||) or SQL92 (rocketmq; pop-push and pull need engine.enablePropertyFilter)
//	    count: 1                  # clients, 1..10000
//	    threads: 20               # consume threads per client, 1..1024
//	    batch: 32                 # messages per pop / receive / pull, 1..32
//	    processing: exp(10ms)     # const, uniform, exp, lognormal(median=,p99=), pareto(alpha=,min=,max=), mix(p:d,...)
//	    outcomes: outcomes(reconsume_later=0.01,exception=0.001)   # default: all succeed
//	    #   poison_every=N,poison_count=K: messages N, 2N, … (at most K; 0: all) throw on every delivery
//	    #   ack_then_fail=p: acked, then the application's own commit fails ("acked, not done", the report counts them)
//	    # the kind's own keys, beside the common ones above; a key of another kind is an error:
//	    # pop-push (sim.PopPushSettings):
//	    invisibleTime: 60s        # popInvisibleTime, 5s..300s
//	    pollTime: 15s             # long polling, 1s..60s
//	    maxReconsumeTimes: 16     # 1..1000
//	    popThresholdForQueue: 96  # waiting-ack messages before the next pop waits 50 ms, 1..100000
//	    suspendCurrentQueueTime: 1s  # orderly groups: a failed batch is suspended this long, 10ms..30s
//	    consumeMessageBatchMaxSize: 1  # messages per listener call, 1..1024 (concurrent groups)
//	    batchAck: false           # ack a call's success prefix in one BATCH_ACK_MESSAGE (rocketmq-rust)
//	    clientRebalance: true     # false: take the queues from the broker (QUERY_ASSIGNMENT): one pop loop per
//	                              #   queue assigned in POP mode, a pull per queue assigned in PULL mode
//	    # simple (sim.SimpleSettings): invisibleTime 10s..12h (60s), pollTime 5s..20s (20s),
//	    #   autoRenew: false (the proxy renews leases while processing),
//	    #   reentrant: false (send an attempt_id, reused after a timed-out receive)
//	    # pull (sim.PullSettings): pollTime 1s..60s (15s), maxReconsumeTimes 1..1000 (16),
//	    #   commitInterval: 5s (offset commit period, 100ms..60s)
//
//	engine:                       # the engine and its own section of settings
//	  kind: rocketmq              # the only kind so far (default); a key the kind lacks is an error
//	  # rocketmq: pop.Config under RocketMQ's broker.conf names; defaults are RocketMQ's.
//	  # One broker.conf holds every setting, as RocketMQ's does: a setting of the
//	  # path not taken is accepted and ignored. (both), (KV), (CK) say which path reads it.
//	  version: ""                           # a release profile (5.1.4 ... 5.5.0, pop.Versions): its bugs
//	                                        # and changed defaults, applied first; the other keys win
//	  popConsumerKVServiceEnable: false     # the POP path: false = checkpoint (RocketMQ's default), true = KV
//	  popConsumerFSServiceInit: true        # (CK) start the buffer and revive services
//	  popConsumerKVServiceInit: false       # (KV) build the KV service (always built when Enable is on)
//	  brokerName: broker-a
//	  brokerClusterName: DefaultCluster     # (CK) the revive topic is rmq_sys_REVIVE_LOG_<cluster>
//	  readable: true
//	  timerWheelEnable: true                # (CK) required for revive
//	  timerPrecisionMs: 1000                # (CK) the timer wheel's slot
//	  timerMaxDelaySec: 259200              # (CK)
//	  popReviveMaxReturnSizePerRead: 16384  # (KV)
//	  popReviveMaxAttemptTimes: 16          # (KV) 0..16
//	  enablePopBufferMerge: false           # (both) KV: stage records in PopConsumerCache; CK: PopBufferMergeService
//	  popCkStayBufferTime: 10000            # (both) milliseconds, or a duration (10s)
//	  popCkStayBufferTimeOut: 3000          # (CK)
//	  popCkMaxBufferSize: 200000            # (both)
//	  popCkOffsetMaxQueueSize: 20000        # (CK)
//	  enablePopBatchAck: false              # (CK) one bAck message per CK
//	  reviveQueueNum: 8                     # (CK) revive-topic queues, one revive service each
//	  reviveInterval: 1000                  # (CK) between revive rounds
//	  reviveMaxSlow: 3                      # (CK)
//	  reviveScanTime: 10000                 # (CK) longest read phase of a round
//	  enableSkipLongAwaitingAck: false      # (CK) #5408's mock checkpoints
//	  reviveAckWaitMs: 180000               # (CK)
//	  skipWhenCKRePutReachMaxTimes: false   # (CK)
//	  popFromRetryProbability: 20           # (both) percent of pops reading the retry topic first (KV: every 100/p-th)
//	  popFromRetryProbabilityForPriority: 0 # (both) the same for a pop in priority mode (a PRIORITY topic)
//	  priorityOrderAsc: true                # (both) all-queue pops scan queues downwards from a rotating start
//	  enableRetryTopicV2: false
//	  retrieveMessageFromPopRetryTopicV1: true
//	  enablePopMessageThreshold: false
//	  popInflightMessageThreshold: 10000    # (both) KV: cached records; CK: the in-flight counter
//	  popPollingSize: 1024
//	  maxPopPollingSize: 100000
//	  popLongPollingForceNotifyInterval: 800
//	  initPopOffsetByCheckMsgInMem: true
//	  useServerSideResetOffset: true
//	  enablePropertyFilter: false           # SQL92 for pull requests and the push consumer's CHECK_CLIENT_CONFIG (pops are not checked)
//	  popConsumerLockTimeout: 120000        # (KV) milliseconds, or a duration
//	  flushConsumerOffsetInterval: 5000     # commit offsets persisted this often; a broker restart (crash) loses the rest
//	  serverLoadBalancerEnable: true        # QUERY_ASSIGNMENT allocates queues among a group's clients (false: all to all)
//	  defaultMessageRequestMode: PULL       # the request mode of a (topic, group) no admin set: PULL or POP
//	  defaultPopShareQueueNum: -1           # its popShareQueueNum in POP mode
//	  bugs:                                 # upstream defects, off by default (see pop.Bugs)
//	    sameDeadlineChangeInvisible: false  # apache/rocketmq#10276
//	    cacheCleanupIgnoresReviveFailure: false   # #10667
//	    v1RetryNoPollWake: false            # #9632
//	    commitOffsetLag: false              # #10949
//	    retryTopicReencoding: false         # #10945/#11195
//	    emptyStageCommitsNextBegin: false   # #9339 (KV, with commitOffsetLag)
//	    reviveReadFailureLosesRetry: false  # #10985 (CK)
//	    rePutCkLosesBrokerName: false       # #7412 (CK)
//	    delayLevelTimer: false              # #3787/#4153 (CK)
//	    sameMillisChangeInvisible: false    # popsim's finding (CK): a renewal's CK takes a live CK's merge key
//	    fifoChangeBelowCommitEmptyHandle: false # popsim's finding (FIFO): a renewal below the commit offset loses the handle's order
//
//	broker:                       # the brokers (docs/calibration.md); left out: one broker, no cost model
//	  count: 1                    # brokers, 1..64 (rocketmq only): each holds every topic with topics[].queues queues
//	  cores: 0                    # the cost model, per broker: 0 (off) or 1..1024, with
//	  #   sendMessageThreadPoolNums (min(cores,4)), pullMessageThreadPoolNums (16+2×cores),
//	  #   ackMessageThreadPoolNums (16), consumerManageThreadPoolNums (32) and
//	  #   costs: {put, pop, ack, change, pull, offset, tick: distributions; work: counter:duration,...}
//
//	network:
//	  requestLatency: uniform(200us,2ms)    # one-way; const(0s) for none
//	  responseLatency: uniform(200us,2ms)
//	  requestTimeout: 3s                    # a renewal's answer (acks are fire and forget); 100ms..60s
//	  pollTimeoutSlack: 10s                 # a long poll times out at pollTime + this; 0s..60s
//	  loss:                                 # request lost / response lost, each 0..50%
//	    pop:    {request: 0.05%, response: 0.05%}
//	    ack:    {request: 0.1%, response: 0.1%}
//	    change: {request: 0, response: 0}
//	    pull:   {request: 0, response: 0}
//
//	faults:                                 # families left out are off
//	  swarm: false                          # per seed: families off at random, weights x1/8..x8
//	  siteEnable: 1                         # two-level activation probability per site and run
//	  crash: {every: 2m, restartDelay: "uniform(1s,5s)"}   # mean time between crashes per consumer, 100ms..24h
//	  pause: {every: 1m, duration: "uniform(50ms,2s)"}     # GC pauses
//	  slow: {every: 2m, duration: "uniform(1s,10s)", factor: 10}   # factor 2..1000
//	  renew: {sameDeadline: 0.05%, atExpiry: 0.02%, afterRevive: 0.02%}   # per delivered message
//	  brokerRestart: {every: 10m}           # a broker crash: cache, parked pops (never answered) lost
//	  brokerStop: {every: 10m}              # rocketmq: a graceful stop and start: parked pops answered, offsets persisted
//	  revivePutFailure: 1%                  # retry-topic writes that fail during revive
//	  reviveReadFailure: 0                  # checkpoint path: revive's reads of a message that fail
//	  clockSkew: 100ms                      # consumer clocks off by up to ± this, 0s..1h
//	  lockBusy: 0.1%                        # pops that find the broker's pop lock held by a concurrent request
//
// A sweep over consumers[*].kind (-param kind=...) works on consumer
// entries that set only keys every swept kind has (pollTime, the common
// keys): an invisibleTime would be an error for pull.
//
// # Overrides and sweep parameters
//
// Override (popsim -set key=value) sets one key before decoding, so an
// overridden value is checked like a written one; [*] addresses every
// list element: -set consumers[*].invisibleTime=10s. Sweep and plan
// parameters are overrides with short aliases (see Aliases): consumers,
// invisible, kind, batch, threads, queues, rate, processing, path
// (kv or checkpoint: engine.popConsumerKVServiceEnable), seeds...
//
// # Theory
//
// MMc and MM1 give Erlang C waiting probabilities, mean waits and
// response-time quantiles; TestValidation runs mmc-validation and
// mm1-validation and compares (make validate runs it at full size).
package scenarios

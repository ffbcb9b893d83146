package sim

import (
	"fmt"
	"reflect"
	"strings"

	"popsim/clock"
	"popsim/filter"
	"popsim/model"
	"popsim/pop"
)

// FieldError is one configuration field outside what is allowed.
type FieldError struct {
	// Path is the field's key path, as in a scenario file:
	// consumers[0].batch, network.loss.ack.request; "" for the whole
	// configuration.
	Path string
	// Msg says what is wrong, with the value: "40 out of range",
	// `topic "x" is not defined`.
	Msg string
	// Want is what is allowed: "1..32", "round-robin or random"; "" when
	// Msg says it all.
	Want string
}

func (e *FieldError) Error() string {
	s := e.Msg
	if e.Want != "" {
		s += ": want " + e.Want
	}
	if e.Path != "" {
		s = e.Path + ": " + s
	}
	return s
}

// ConfigError is every field error of a configuration, in the order of
// its sections.
type ConfigError struct {
	Fields []*FieldError
}

func (e *ConfigError) Error() string {
	lines := make([]string, len(e.Fields))
	for i, f := range e.Fields {
		lines[i] = "sim: " + f.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the field errors, for errors.As.
func (e *ConfigError) Unwrap() []error {
	out := make([]error, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = f
	}
	return out
}

// validator collects field errors.
type validator struct {
	errs []*FieldError
}

func (v *validator) add(path, want, format string, a ...any) {
	v.errs = append(v.errs, &FieldError{Path: path, Msg: fmt.Sprintf(format, a...), Want: want})
}

func (v *validator) intIn(path string, x, lo, hi int64) {
	if x < lo || x > hi {
		v.add(path, fmt.Sprintf("%d..%d", lo, hi), "%d out of range", x)
	}
}

// durIn checks lo <= d <= hi; note follows the range ("for pop-push").
func (v *validator) durIn(path string, d, lo, hi clock.Duration, note string) {
	if d < lo || d > hi {
		v.add(path, fmt.Sprintf("%v..%v%s", lo.Std(), hi.Std(), note), "%v out of range", d.Std())
	}
}

func (v *validator) ppmIn(path string, p, hi PPM) {
	if p < 0 || p > hi {
		v.add(path, "0.."+hi.decimal(), "%s out of range", p)
	}
}

func (v *validator) name(path, kind, name string) {
	validate := model.ValidateTopic
	if kind == "group" {
		validate = func(n string) error { return model.ValidateGroup(n, model.MaxGroupLength) }
	}
	if err := validate(name); err != nil {
		v.add(path, "", "%s", strings.TrimPrefix(err.Error(), "model: "))
	}
}

// Validate applies the defaults and reports every field outside its
// allowed range or values as a *ConfigError of *FieldErrors, each naming
// the field's key path, what is wrong and what is allowed.
func (c *Config) Validate() error {
	_, err := c.WithDefaults().layout()
	return err
}

// layout is a validated configuration (defaults applied) and what a run
// derives from it: lookups by name and one entry per client instance.
type layout struct {
	cfg       Config
	topics    map[string]*TopicSpec
	groups    map[string]pop.GroupConfig
	groupList []string        // consuming groups in first-use order
	consumers []*ConsumerSpec // one per consumer instance (Count of each)
	producers []*ProducerSpec // one per producer instance
	sha256    string          // the configuration's hash, of the configuration as given
}

// layout validates c, whose defaults are applied, and derives the run's
// lookups.
func (c Config) layout() (*layout, error) {
	l := &layout{cfg: c, topics: map[string]*TopicSpec{}, groups: map[string]pop.GroupConfig{}}
	v := &validator{}
	l.checkRun(v)
	l.checkTopics(v)
	l.checkGroups(v)
	l.checkProducers(v)
	l.checkConsumers(v)
	l.checkEngine(v)
	l.checkBroker(v)
	l.checkNetwork(v)
	l.checkFaults(v)
	for i := range l.cfg.Groups {
		l.checkSwitch(v, fmt.Sprintf("groups[%d]", i), &l.cfg.Groups[i])
	}
	if len(v.errs) > 0 {
		return nil, &ConfigError{Fields: v.errs}
	}
	l.checkConsumedTopics(v)
	if len(v.errs) > 0 {
		return nil, &ConfigError{Fields: v.errs}
	}
	return l, nil
}

func (l *layout) checkRun(v *validator) {
	c := &l.cfg
	v.durIn("duration", c.Duration, clock.Millisecond, 720*clock.Hour, "")
	if w, fixed := c.Warmup.Fixed(); fixed && (w < 0 || w >= c.Duration) {
		v.add("warmup", fmt.Sprintf("auto, or a duration less than duration (%v)", c.Duration.Std()), "%v out of range", w.Std())
	}
	v.durIn("drain", c.Drain, clock.Second, 720*clock.Hour, "")
	v.intIn("eventBudget", c.EventBudget, 1, 1e12)
	v.durIn("sampleInterval", c.SampleInterval, 10*clock.Millisecond, c.Duration+c.Drain, "")
	if c.Start < 0 {
		v.add("start", "a non-negative time", "%d", c.Start)
	}
}

func (l *layout) checkTopics(v *validator) {
	if len(l.cfg.Topics) == 0 {
		v.add("topics", "", "missing: want at least one topic, e.g. topics: [{name: orders, queues: 8}]")
	}
	for i := range l.cfg.Topics {
		t := &l.cfg.Topics[i]
		p := fmt.Sprintf("topics[%d]", i)
		switch {
		case strings.HasPrefix(t.Name, "%"):
			v.add(p+".name", "", "%q: names starting with %% are RocketMQ's system topics (%%RETRY%%, %%DLQ%%)", t.Name)
		case l.topics[t.Name] != nil:
			v.add(p+".name", "", "topic %q defined twice", t.Name)
		default:
			v.name(p+".name", "topic", t.Name)
		}
		v.intIn(p+".queues", int64(t.Queues), 1, 1024)
		if l.topics[t.Name] == nil {
			l.topics[t.Name] = t
		}
	}
}

func (l *layout) checkGroups(v *validator) {
	for i, g := range l.cfg.Groups {
		p := fmt.Sprintf("groups[%d]", i)
		if _, dup := l.groups[g.Name]; dup {
			v.add(p+".name", "", "group %q defined twice", g.Name)
			continue
		}
		v.name(p+".name", "group", g.Name)
		v.intIn(p+".retryMaxTimes", int64(g.RetryMaxTimes), 1, 64)
		gc := pop.DefaultGroup(g.Name)
		gc.RetryMaxTimes = g.RetryMaxTimes
		gc.ConsumeMessageOrderly = g.ConsumeMessageOrderly
		l.groups[g.Name] = gc
		l.checkRequestMode(v, p, &l.cfg.Groups[i])
	}
}

// topicRef checks that name is a defined topic.
func (l *layout) topicRef(v *validator, path, name string) bool {
	if l.topics[name] != nil {
		return true
	}
	names := make([]string, len(l.cfg.Topics))
	for i, t := range l.cfg.Topics {
		names[i] = t.Name
	}
	v.add(path, "one of "+strings.Join(names, ", "), "topic %q is not defined", name)
	return false
}

func (l *layout) checkProducers(v *validator) {
	if len(l.cfg.Producers) == 0 {
		v.add("producers", "", "missing: want at least one producer, e.g. producers: [{topic: orders, arrivals: poisson(1000/s)}]")
	}
	for i := range l.cfg.Producers {
		s := &l.cfg.Producers[i]
		p := fmt.Sprintf("producers[%d]", i)
		l.topicRef(v, p+".topic", s.Topic)
		if s.Arrivals.IsZero() {
			v.add(p+".arrivals", "", "missing: want an arrival process such as poisson(1000/s)")
		}
		v.intIn(p+".count", int64(s.Count), 1, 1000)
		if s.QueueSelect != QueueRoundRobin && s.QueueSelect != QueueRandom {
			v.add(p+".queueSelect", QueueRoundRobin+" or "+QueueRandom, "%q", s.QueueSelect)
		}
		for range inRange(s.Count, 1000) {
			l.producers = append(l.producers, s)
		}
	}
}

func (l *layout) checkConsumers(v *validator) {
	if len(l.cfg.Consumers) == 0 {
		v.add("consumers", "", "missing: want at least one consumer, e.g. consumers: [{kind: pop-push, group: g, topic: orders}]")
	}
	first := map[string]*ConsumerSpec{} // the first consumer entry of each group
	for i := range l.cfg.Consumers {
		s := &l.cfg.Consumers[i]
		p := fmt.Sprintf("consumers[%d]", i)
		l.checkConsumer(v, p, s)
		if f, ok := first[s.Group]; ok && (f.Kind != s.Kind || f.Topic != s.Topic) {
			v.add(p+".group", "", "group %q already has %s consumers of topic %q: a group has one kind and one topic", s.Group, f.Kind, f.Topic)
		}
		if g, ok := l.groups[s.Group]; ok && g.ConsumeMessageOrderly && s.Kind == Pull {
			v.add(p+".kind", "pop-push or simple", "group %q consumes orderly: the Pull baseline has no orderly mode", s.Group)
		}
		if g, ok := l.groups[s.Group]; ok && g.ConsumeMessageOrderly {
			if set, ok := s.Settings.(*PopPushSettings); ok && set.ConsumeMessageBatchMaxSize > 1 {
				v.add(p+".consumeMessageBatchMaxSize", "1 (listener batches are modelled for concurrent groups only)", "group %q consumes orderly", s.Group)
			}
			if set, ok := s.Settings.(*PopPushSettings); ok && set.BatchAck {
				v.add(p+".batchAck", "false (batch acks are modelled for concurrent groups only)", "group %q consumes orderly", s.Group)
			}
		}
		if _, ok := first[s.Group]; !ok {
			first[s.Group] = s
			l.groupList = append(l.groupList, s.Group)
		}
		if _, ok := l.groups[s.Group]; !ok {
			l.groups[s.Group] = pop.DefaultGroup(s.Group)
		}
		for range inRange(s.Count, 10000) {
			l.consumers = append(l.consumers, s)
		}
	}
}

func (l *layout) checkConsumer(v *validator, p string, s *ConsumerSpec) {
	hi := int32(pop.MaxPopBatch)
	if want := s.Kind.newSettings(); want == nil {
		v.add(p+".kind", orList(s.Kinds()), "%q", s.Kind)
	} else if s.Settings != nil && reflect.TypeOf(s.Settings) != reflect.TypeOf(want) {
		v.add(p, "", "the settings are %s's but the kind is %s", s.Settings.Kind(), s.Kind)
	} else {
		s.Settings.check(v, p)
		_, hi = s.Settings.batch()
		l.checkConsumerEngine(v, p, s.Kind)
	}
	v.name(p+".group", "group", s.Group)
	if len(l.cfg.Groups) > 0 {
		if _, ok := l.groups[s.Group]; !ok {
			names := make([]string, len(l.cfg.Groups))
			for i, g := range l.cfg.Groups {
				names[i] = g.Name
			}
			v.add(p+".group", "one of "+strings.Join(names, ", ")+" (the groups defined under groups)", "group %q is not defined", s.Group)
		}
	}
	l.topicRef(v, p+".topic", s.Topic)
	v.intIn(p+".count", int64(s.Count), 1, 10000)
	v.intIn(p+".threads", int64(s.Threads), 1, 1024)
	v.intIn(p+".batch", int64(s.Batch), 1, int64(hi))
}

// checkConsumerEngine requires a consumer kind the engine serves.
func (l *layout) checkConsumerEngine(v *validator, p string, k ConsumerKind) {
	r := engineOf(l.cfg.Engine.Kind)
	if r == nil {
		return // reported under engine.kind
	}
	for _, ck := range r.consumers {
		if ck == k {
			return
		}
	}
	names := make([]string, len(r.consumers))
	for i, ck := range r.consumers {
		names[i] = string(ck)
	}
	v.add(p+".kind", orList(names)+" (the "+string(r.kind)+" engine's clients), or leave it out", "%s consumers do not speak to the %s engine", k, r.kind)
}

func (l *layout) checkEngine(v *validator) {
	e := &l.cfg.Engine
	r := engineOf(e.Kind)
	if r == nil {
		v.add("engine.kind", orList(e.Kinds()), "%q", e.Kind)
		return
	}
	if reflect.TypeOf(e.Settings) != reflect.TypeOf(r.defaults()) {
		v.add("engine", "", "the settings are a %T, not the %s engine's", e.Settings, e.Kind)
		return
	}
	r.check(e.Settings, v)
	r.faults(r.kind, &l.cfg.Faults, v)
}

func (l *layout) checkNetwork(v *validator) {
	n := &l.cfg.Network
	v.durIn("network.requestTimeout", n.RequestTimeout, 100*clock.Millisecond, 60*clock.Second, "")
	v.durIn("network.pollTimeoutSlack", n.PollTimeoutSlack, 0, 60*clock.Second, "")
	for i, pair := range n.Loss.pairs() {
		p := "network.loss." + lossKinds[i]
		v.ppmIn(p+".request", pair.Request, 500_000)
		v.ppmIn(p+".response", pair.Response, 500_000)
	}
}

func (l *layout) checkFaults(v *validator) {
	f := &l.cfg.Faults
	for _, e := range []struct {
		path string
		d    clock.Duration
	}{{"crash", f.Crash.Every}, {"pause", f.Pause.Every}, {"slow", f.Slow.Every}, {"brokerRestart", f.BrokerRestart.Every}, {"brokerStop", f.BrokerStop.Every}} {
		if e.d != 0 {
			v.durIn("faults."+e.path+".every", e.d, 100*clock.Millisecond, 24*clock.Hour, "")
		}
	}
	v.intIn("faults.slow.factor", f.Slow.Factor, 2, 1000)
	v.durIn("faults.clockSkew", f.ClockSkew, 0, clock.Hour, "")
	for _, e := range []struct {
		path string
		p    PPM
	}{
		{"siteEnable", f.SiteEnable}, {"renew.sameDeadline", f.Renew.SameDeadline}, {"renew.atExpiry", f.Renew.AtExpiry},
		{"renew.afterRevive", f.Renew.AfterRevive}, {"revivePutFailure", f.RevivePutFailure}, {"lockBusy", f.LockBusy},
		{"duplicateDelivery", f.DuplicateDelivery},
		{"reviveReadFailure", f.ReviveReadFailure},
	} {
		v.ppmIn("faults."+e.path, e.p, 1_000_000)
	}
}

// checkConsumedTopics requires every produced topic to have a consuming
// group (an unconsumed topic never drains). On the rocketmq engine several
// groups may consume one topic, each an independent consumer of every
// message it subscribes to (the meter and the checker count per group and
// message); the other engines' adapters keep one group per topic. It runs
// once every field is valid.
func (l *layout) checkConsumedTopics(v *validator) {
	groupOf := map[string]string{}
	for i := range l.cfg.Consumers {
		s := &l.cfg.Consumers[i]
		if g, ok := groupOf[s.Topic]; ok && g != s.Group && l.cfg.Engine.Kind != RocketMQ {
			v.add(fmt.Sprintf("consumers[%d].group", i), "one group per topic on the "+string(l.cfg.Engine.Kind)+" engine (several groups on one topic are modelled on rocketmq)",
				"topic %q is consumed by groups %q and %q", s.Topic, g, s.Group)
			continue
		}
		if _, ok := groupOf[s.Topic]; !ok {
			groupOf[s.Topic] = s.Group
		}
	}
	for i, pr := range l.cfg.Producers {
		if _, ok := groupOf[pr.Topic]; !ok {
			v.add(fmt.Sprintf("producers[%d].topic", i), "", "%q has no consumer group: its messages could never drain", pr.Topic)
		}
	}
	l.checkExpressions(v)
}

// checkExpressions requires each subscription to be one RocketMQ accepts,
// one per group. TAG is every engine's; SQL92 is RocketMQ's, and its
// pop-push and pull consumers need the broker's enablePropertyFilter (the
// simple consumer's proxy pops, which are not checked). On the rocketmq
// engine a message a group does not subscribe to is owed to no one (the
// simulator settles it as a drop r=no-match when it is stored), for every
// consumer kind: concurrent and orderly POP groups never see it, and the
// Pull baseline's offsets pass it. The other engines' consumers have no
// broker-side filter, so their subscription must accept every message
// their topic's producers send.
func (l *layout) checkExpressions(v *validator) {
	type sub struct{ typ, expr string }
	first := map[string]sub{}
	for i := range l.cfg.Consumers {
		s := &l.cfg.Consumers[i]
		p := fmt.Sprintf("consumers[%d]", i)
		f, ok := l.checkExpression(v, p, s)
		if !ok {
			continue
		}
		if e, ok := first[s.Group]; ok && e != (sub{s.ExpressionType, s.Expression}) {
			v.add(p+".expression", fmt.Sprintf("%s %q, as the group's other consumers", e.typ, e.expr), "group %q subscribes with one expression", s.Group)
			continue
		}
		first[s.Group] = sub{s.ExpressionType, s.Expression}
		if f.MatchesAll() || l.filtersAtBroker(s) {
			continue
		}
		l.checkAcceptsAll(v, p, s, f)
	}
}

// checkExpression checks one consumer's subscription: its type, its
// expression (as FilterAPI.build and the broker compile it), and where
// RocketMQ accepts SQL92.
func (l *layout) checkExpression(v *validator, p string, s *ConsumerSpec) (*filter.Filter, bool) {
	if s.ExpressionType != filter.TypeTag && s.ExpressionType != filter.TypeSQL92 {
		v.add(p+".expressionType", filter.TypeTag+" or "+filter.TypeSQL92+" (RocketMQ's names, in capitals)", "%q", s.ExpressionType)
		return nil, false
	}
	f, err := filter.Parse(s.ExpressionType, s.Expression)
	if err != nil {
		want := "a TAG expression: * or tags joined by ||"
		if s.ExpressionType == filter.TypeSQL92 {
			want = "a SQL92 condition over message properties, e.g. region = 'eu' AND price > 10 (docs/filters.md)"
		}
		v.add(p+".expression", want, "%v", err)
		return nil, false
	}
	if s.ExpressionType != filter.TypeSQL92 {
		return f, true
	}
	if l.cfg.Engine.Kind != RocketMQ {
		v.add(p+".expressionType", "TAG on the "+string(l.cfg.Engine.Kind)+" engine", "SQL92 subscriptions are RocketMQ's")
		return nil, false
	}
	if e, ok := l.cfg.Engine.Settings.(*pop.Config); ok && !e.EnablePropertyFilter && (s.Kind == PopPush || s.Kind == Pull) {
		when := "to the push consumer's CHECK_CLIENT_CONFIG when it starts, so it never starts"
		if s.Kind == Pull {
			when = "to every pull"
		}
		v.add(p+".expressionType", "engine.enablePropertyFilter: true, or simple consumers (the proxy's pops are not checked)",
			"SQL92 while the broker's enablePropertyFilter is false: RocketMQ answers SYSTEM_ERROR (%s) %s", filter.PropertyFilterDisabledRemark(filter.TypeSQL92), when)
		return nil, false
	}
	return f, true
}

// filtersAtBroker reports whether a message the consumer's group does not
// subscribe to is settled for it as owed to no one: the broker's store
// read skips it and the client model copes with the gap (rocketmq).
func (l *layout) filtersAtBroker(*ConsumerSpec) bool {
	return l.cfg.Engine.Kind == RocketMQ
}

// checkAcceptsAll requires f to accept every message the producers of the
// consumer's topic send: each tag with each property set.
func (l *layout) checkAcceptsAll(v *validator, p string, s *ConsumerSpec, f *filter.Filter) {
	for _, pr := range l.cfg.Producers {
		if pr.Topic != s.Topic {
			continue
		}
		sets := pr.Properties.Sets()
		if sets == nil {
			sets = [][]model.Property{nil}
		}
		for _, tag := range pr.Tags.Names() {
			for _, set := range sets {
				if ok, err := f.Accepts(tag, set...); err != nil || !ok {
					v.add(p+".expression", "one that accepts every message its topic's producers send, or *",
						"%q does not accept tag %q%s that producers of %s send: filtered messages never settle", s.Expression, tag, propsText(set), s.Topic)
					return
				}
			}
		}
	}
}

// propsText is a property set for an error message: "" when empty.
func propsText(set []model.Property) string {
	if len(set) == 0 {
		return ""
	}
	kv := make([]string, len(set))
	for i, x := range set {
		kv[i] = x.Key + "=" + x.Value
	}
	return " with properties " + strings.Join(kv, ",")
}

// inRange is n when 0 <= n <= hi, else 0: how many instances of an entry
// to lay out while its count may still be out of range (reported).
func inRange(n, hi int) int {
	if n < 0 || n > hi {
		return 0
	}
	return n
}

package serve

import (
	"context"
	"sync"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"popsim/clock"
)

// sessions is the proxy's client table: each client's settings, keyed by
// the x-mq-client-id metadata, and the open telemetry streams.
type sessions struct {
	mu       sync.Mutex
	settings map[string]*v2.Settings
	streams  map[chan struct{}]struct{} // closed to end a stream (restart)
	changed  chan struct{}              // closed and replaced by every put
}

func newSessions() *sessions {
	return &sessions{settings: map[string]*v2.Settings{}, streams: map[chan struct{}]struct{}{}, changed: make(chan struct{})}
}

// settingsGrace is how long a call that needs its client's settings waits
// for them. The client sends its settings on the telemetry stream and,
// without waiting for an answer, its first receive on another stream; the
// proxy nearly always sees the settings first, this server's goroutines
// may not.
const settingsGrace = time.Second

// await returns the client's settings, waiting up to settingsGrace for
// them; nil if they do not come.
func (s *sessions) await(ctx context.Context, clientID string) *v2.Settings {
	t := time.NewTimer(settingsGrace)
	defer t.Stop()
	for {
		s.mu.Lock()
		st, changed := s.settings[clientID], s.changed
		s.mu.Unlock()
		if st != nil {
			return st
		}
		select {
		case <-changed:
		case <-t.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

func (s *sessions) get(clientID string) *v2.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settings[clientID]
}

func (s *sessions) put(clientID string, st *v2.Settings) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settings[clientID] = st
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *sessions) remove(clientID string) *v2.Settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.settings[clientID]
	delete(s.settings, clientID)
	return st
}

func (s *sessions) openStream() chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := make(chan struct{})
	s.streams[c] = struct{}{}
	return c
}

func (s *sessions) closeStream(c chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.streams, c)
}

// forget drops every client's settings and ends every telemetry stream,
// as a proxy restart does; clients recover through the heartbeat's
// UNRECOGNIZED_CLIENT_TYPE, which makes them send their settings again.
func (s *sessions) forget() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.settings)
	s.settings = map[string]*v2.Settings{}
	for c := range s.streams {
		close(c)
	}
	s.streams = map[chan struct{}]struct{}{}
	return n
}

// The settings the proxy imposes (ProxyConfig defaults).
const (
	producerMaxAttempts    = 3                        // grpcClientProducerMaxAttempts
	producerBackoffInitial = 10 * clock.Millisecond   // grpcClientProducerBackoffInitialMillis
	producerBackoffMax     = 1000 * clock.Millisecond // grpcClientProducerBackoffMaxMillis
	producerBackoffFactor  = 2                        // grpcClientProducerBackoffMultiplier
	consumerBatchSize      = 32                       // grpcClientConsumerLongPollingBatchSize
	consumerMaxPolling     = 20 * clock.Second        // grpcClientConsumerMaxLongPollingTimeoutMillis
)

// customizedRetry is CustomizedRetryPolicy's default schedule, in seconds.
var customizedRetry = [...]int64{1, 5, 10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200}

func dur(d clock.Duration) *durationpb.Duration { return durationpb.New(d.Std()) }

// producerSettings is GrpcClientSettingsManager.mergeProducerData with the
// metric collector off: the client's settings, the proxy's backoff policy,
// type validation and body size limit. max_body_size must be set: a
// client that receives 0 rejects every body.
func producerSettings(client *v2.Settings) *v2.Settings {
	st := proto.Clone(client).(*v2.Settings)
	st.BackoffPolicy = &v2.RetryPolicy{
		MaxAttempts: producerMaxAttempts,
		Strategy: &v2.RetryPolicy_ExponentialBackoff{ExponentialBackoff: &v2.ExponentialBackoff{
			Initial: dur(producerBackoffInitial), Max: dur(producerBackoffMax), Multiplier: producerBackoffFactor,
		}},
	}
	pub := st.GetPublishing()
	pub.ValidateMessageType = true
	pub.MaxBodySize = maxBodySize
	st.Metric = &v2.Metric{On: false}
	return st
}

// consumerSettings is mergeSubscriptionData: the group's retry policy
// (maxAttempts = retryMaxTimes + 1, the customized schedule), the receive
// batch size and the longest long poll.
func consumerSettings(client *v2.Settings, retryMaxTimes int32) *v2.Settings {
	st := proto.Clone(client).(*v2.Settings)
	next := make([]*durationpb.Duration, len(customizedRetry))
	for i, s := range customizedRetry {
		next[i] = dur(clock.Duration(s) * clock.Second)
	}
	st.BackoffPolicy = &v2.RetryPolicy{
		MaxAttempts: retryMaxTimes + 1,
		Strategy:    &v2.RetryPolicy_CustomizedBackoff{CustomizedBackoff: &v2.CustomizedBackoff{Next: next}},
	}
	sub := st.GetSubscription()
	sub.ReceiveBatchSize = proto.Int32(consumerBatchSize)
	sub.LongPollingTimeout = dur(consumerMaxPolling)
	sub.Fifo = proto.Bool(false)
	st.Metric = &v2.Metric{On: false}
	return st
}

package serve

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"popsim/clock"
	"popsim/pop"
)

// maxInbound is the proxy's grpcMaxInboundMessageSize (130 MiB): a body
// over the 4 MiB limit reaches the check that answers
// MESSAGE_BODY_TOO_LARGE instead of failing in transport.
const maxInbound = 130 * 1024 * 1024

// Server is popsim's POP engine behind apache.rocketmq.v2.MessagingService.
// Create it with New, start it with Start, stop it with Stop.
type Server struct {
	v2.UnimplementedMessagingServiceServer

	cfg      Config
	l        *loop
	sessions *sessions
	grpc     *grpc.Server
	lis      net.Listener
	tls      *tls.Config
	stopping chan struct{}
}

// New validates cfg, builds the engine and starts its goroutine; nothing
// listens until Start. Stop releases it.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logf := cfg.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	s := &Server{cfg: cfg, sessions: newSessions(), stopping: make(chan struct{})}
	l, err := newLoop(&s.cfg, logf)
	if err != nil {
		return nil, err
	}
	if !cfg.Plaintext {
		host, _, _ := net.SplitHostPort(cfg.Advertise)
		if s.tls, err = selfSignedTLS(host); err != nil {
			return nil, err
		}
	}
	l.onRestart = s.sessions.forget
	s.l = l
	go l.run()
	return s, nil
}

// Start listens on the configured address and serves in the background.
func (s *Server) Start() error {
	lis, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("serve: listen on %s: %v", s.cfg.Addr, err)
	}
	s.lis = lis
	s.l.do(func(clock.Time) { s.l.storeHost = lis.Addr().String() })
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxInbound)}
	if s.tls != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(s.tls)))
	}
	s.grpc = grpc.NewServer(opts...)
	v2.RegisterMessagingServiceServer(s.grpc, s)
	go func() { _ = s.grpc.Serve(lis) }()
	s.l.logf("serving apache.rocketmq.v2.MessagingService on %s (%s, path %s), faults: %s", lis.Addr(), s.transport(), s.cfg.Path, s.cfg.Faults)
	return nil
}

func (s *Server) transport() string {
	if s.tls == nil {
		return "plaintext"
	}
	return "TLS, self-signed"
}

// Addr is the address the server listens on (with the port chosen when
// the configured one was 0).
func (s *Server) Addr() string {
	if s.lis == nil {
		return s.cfg.Addr
	}
	return s.lis.Addr().String()
}

// Stop ends every call and the engine.
func (s *Server) Stop() {
	select {
	case <-s.stopping:
		return
	default:
		close(s.stopping)
	}
	s.sessions.forget()
	s.l.stop()
	if s.grpc != nil {
		s.grpc.Stop()
	}
}

// Restart restarts the server in place: the engine loses its volatile
// state (as Broker.Restart: the cache, pull offsets, suspended polls, the
// revive cursor) and the proxy its client table, so open telemetry
// streams end and clients resend their settings after their next
// heartbeat. Messages, offsets and in-flight records survive.
func (s *Server) Restart() {
	s.l.do(func(now clock.Time) { s.l.restart(now, "on demand") })
}

// SetFaults puts f in force from the next request on.
func (s *Server) SetFaults(f Faults) error {
	var err error
	if !s.l.do(func(now clock.Time) { err = s.l.setFaults(now, f) }) {
		return fmt.Errorf("serve: the server is stopped")
	}
	if err == nil {
		s.l.logf("faults: %s", f)
	}
	return err
}

// clientID is the proxy's per-client key: the x-mq-client-id metadata.
func clientID(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-mq-client-id"); len(v) > 0 {
		return v[0]
	}
	return ""
}

// clientVersion is the x-mq-client-version metadata.
func clientVersion(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-mq-client-version"); len(v) > 0 {
		return v[0]
	}
	return ""
}

var errNoClientID = reject(v2.Code_CLIENT_ID_REQUIRED, "client id cannot be empty")

func remoteAddr(ctx context.Context) string {
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		return p.Addr.String()
	}
	return ""
}

// lost plays a lost request or response: the client hears nothing and its
// call ends at its own deadline (or when the server stops).
func (s *Server) lost(ctx context.Context) error {
	select {
	case <-ctx.Done():
	case <-s.stopping:
	}
	return status.Error(codes.DeadlineExceeded, "popsim serve: lost (fault injection)")
}

// delay holds a response for the delay fault.
func (s *Server) delay(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	case <-s.stopping:
	}
}

// stoppedErr answers a call that arrived while the server stopped.
var stoppedErr = status.Error(codes.Unavailable, "popsim serve: stopping")

// QueryRoute answers the topic's queues, all on this server, in queue
// order (the client compares routes every 30 s, so the order is stable).
func (s *Server) QueryRoute(ctx context.Context, req *v2.QueryRouteRequest) (*v2.QueryRouteResponse, error) {
	if clientID(ctx) == "" {
		return &v2.QueryRouteResponse{Status: errNoClientID.status()}, nil
	}
	name := req.GetTopic().GetName()
	if err := s.checkTopic(name); err != nil {
		return &v2.QueryRouteResponse{Status: err.status()}, nil
	}
	spec := s.topic(name)
	broker := &v2.Broker{Name: s.cfg.Broker.BrokerName, Id: 0, Endpoints: s.endpoints(req.GetEndpoints())}
	var queues []*v2.MessageQueue
	for i := int32(0); i < spec.Queues; i++ {
		queues = append(queues, &v2.MessageQueue{
			Topic: &v2.Resource{Name: name, ResourceNamespace: req.GetTopic().GetResourceNamespace()},
			Id:    i, Permission: v2.Permission_READ_WRITE, Broker: broker,
			AcceptMessageTypes: []v2.MessageType{v2.MessageType_NORMAL},
		})
	}
	return &v2.QueryRouteResponse{Status: statusOK, MessageQueues: queues}, nil
}

// checkTopic is the proxy's topic validation, then the route lookup.
func (s *Server) checkTopic(name string) *protoError {
	if err := validateTopicName(name); err != nil {
		return reject(v2.Code_ILLEGAL_TOPIC, err.Error())
	}
	if s.topic(name) == nil {
		return reject(v2.Code_TOPIC_NOT_FOUND, "topic "+name+" does not exist")
	}
	return nil
}

func (s *Server) topic(name string) *TopicSpec {
	for i := range s.cfg.Topics {
		if s.cfg.Topics[i].Name == name {
			return &s.cfg.Topics[i]
		}
	}
	return nil
}

// endpoints names this server: the advertised address, or the hosts the
// client dialed with the listening port (the proxy's default,
// useEndpointPortFromRequest = false).
func (s *Server) endpoints(asked *v2.Endpoints) *v2.Endpoints {
	_, portStr, _ := net.SplitHostPort(s.Addr())
	port, _ := strconv.Atoi(portStr)
	if s.cfg.Advertise != "" {
		host, p, err := net.SplitHostPort(s.cfg.Advertise)
		if err == nil {
			port, _ = strconv.Atoi(p)
		}
		return &v2.Endpoints{Scheme: schemeOf(host), Addresses: []*v2.Address{{Host: host, Port: int32(port)}}}
	}
	out := &v2.Endpoints{Scheme: asked.GetScheme()}
	for _, a := range asked.GetAddresses() {
		out.Addresses = append(out.Addresses, &v2.Address{Host: a.GetHost(), Port: int32(port)})
	}
	if len(out.Addresses) == 0 {
		host, _, _ := net.SplitHostPort(s.Addr())
		out.Scheme, out.Addresses = schemeOf(host), []*v2.Address{{Host: host, Port: int32(port)}}
	}
	return out
}

func schemeOf(host string) v2.AddressScheme {
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return v2.AddressScheme_DOMAIN_NAME
	case ip.To4() != nil:
		return v2.AddressScheme_IPv4
	}
	return v2.AddressScheme_IPv6
}

// Heartbeat answers UNRECOGNIZED_CLIENT_TYPE to a client whose settings
// the server does not hold, which makes the client send them again.
func (s *Server) Heartbeat(ctx context.Context, req *v2.HeartbeatRequest) (*v2.HeartbeatResponse, error) {
	id := clientID(ctx)
	if id == "" {
		return &v2.HeartbeatResponse{Status: errNoClientID.status()}, nil
	}
	st := s.sessions.get(id)
	if st == nil {
		return &v2.HeartbeatResponse{Status: statusOf(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client")}, nil
	}
	switch st.GetClientType() {
	case v2.ClientType_PRODUCER:
	case v2.ClientType_PUSH_CONSUMER, v2.ClientType_SIMPLE_CONSUMER:
		if _, err := s.registerGroup(req.GetGroup().GetName()); err != nil {
			return &v2.HeartbeatResponse{Status: err.status()}, nil
		}
	default:
		return &v2.HeartbeatResponse{Status: statusOf(v2.Code_UNRECOGNIZED_CLIENT_TYPE, st.GetClientType().String())}, nil
	}
	return &v2.HeartbeatResponse{Status: statusOK}, nil
}

// registerGroup validates a consumer group and creates it when new; it
// returns the group's retryMaxTimes.
func (s *Server) registerGroup(name string) (int32, *protoError) {
	if err := validateGroupName(name); err != nil {
		return 0, reject(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())
	}
	var retry int32
	var err error
	if !s.l.do(func(clock.Time) {
		if err = s.l.ensureGroup(name); err == nil {
			retry = s.l.groups[name].RetryMaxTimes
		}
	}) {
		return 0, reject(v2.Code_INTERNAL_SERVER_ERROR, "the server is stopping")
	}
	if err != nil {
		return 0, reject(v2.Code_ILLEGAL_CONSUMER_GROUP, err.Error())
	}
	return retry, nil
}

// Telemetry keeps the client's settings and answers each with the
// settings merged with the server's. The client opens one stream per
// route address and sends its settings without waiting; the stream stays
// open until the client closes it (or a restart ends it).
func (s *Server) Telemetry(stream v2.MessagingService_TelemetryServer) error {
	ctx := stream.Context()
	id := clientID(ctx)
	if id == "" {
		return status.Error(codes.InvalidArgument, "client id cannot be empty")
	}
	end := s.sessions.openStream()
	defer s.sessions.closeStream(end)
	cmds := make(chan *v2.TelemetryCommand)
	errs := make(chan error, 1)
	go func() {
		for {
			cmd, err := stream.Recv()
			if err != nil {
				errs <- err
				return
			}
			select {
			case cmds <- cmd:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case cmd := <-cmds:
			if err := s.telemetryCommand(id, cmd, stream); err != nil {
				return err
			}
		case <-errs:
			return nil // the client closed its side (or went away)
		case <-end:
			return status.Error(codes.Unavailable, "popsim serve: restarted")
		case <-s.stopping:
			return stoppedErr
		case <-ctx.Done():
			return nil
		}
	}
}

func (s *Server) telemetryCommand(id string, cmd *v2.TelemetryCommand, stream v2.MessagingService_TelemetryServer) error {
	st := cmd.GetSettings()
	if st == nil {
		return nil // thread stacks and verify results answer commands popsim never sends
	}
	var merged *v2.Settings
	switch {
	case st.GetPublishing() != nil:
		for _, t := range st.GetPublishing().GetTopics() {
			if err := validateTopicName(t.GetName()); err != nil {
				return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
			}
		}
		merged = producerSettings(st)
	case st.GetSubscription() != nil:
		if err := validateGroupName(st.GetSubscription().GetGroup().GetName()); err != nil {
			return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.Error())
		}
		s.sessions.put(id, st) // before the engine round trip: a receive may be waiting for it
		retry, err := s.registerGroup(st.GetSubscription().GetGroup().GetName())
		if err != nil {
			return status.Error(codes.InvalidArgument, "process client telemetryCommand failed. "+err.msg)
		}
		merged = consumerSettings(st, retry)
	default:
		return status.Error(codes.InvalidArgument, "there is no publishing or subscription data in settings")
	}
	s.sessions.put(id, st)
	return stream.Send(&v2.TelemetryCommand{Status: statusOK, Command: &v2.TelemetryCommand_Settings{Settings: merged}})
}

// NotifyClientTermination forgets the client's settings.
func (s *Server) NotifyClientTermination(ctx context.Context, req *v2.NotifyClientTerminationRequest) (*v2.NotifyClientTerminationResponse, error) {
	id := clientID(ctx)
	if id == "" {
		return &v2.NotifyClientTerminationResponse{Status: errNoClientID.status()}, nil
	}
	if s.sessions.remove(id) == nil {
		return &v2.NotifyClientTerminationResponse{Status: statusOf(v2.Code_UNRECOGNIZED_CLIENT_TYPE, "cannot find client settings for this client")}, nil
	}
	return &v2.NotifyClientTerminationResponse{Status: statusOK}, nil
}

// Stats returns the server's counters (the final ones once stopped).
func (s *Server) Stats() Stats {
	var st Stats
	if !s.l.do(func(clock.Time) { st = s.l.Stats }) {
		st = s.l.Stats // the loop has returned: nothing writes them any more
	}
	return st
}

// State returns a snapshot of the engine (pop.Broker.State).
func (s *Server) State() pop.State {
	var st pop.State
	if !s.l.do(func(clock.Time) { st = s.l.b.State() }) {
		st = s.l.b.State()
	}
	return st
}

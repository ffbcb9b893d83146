package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"popsim/serve"
)

// cmdServe runs popsim's engine as a RocketMQ 5 gRPC endpoint until it is
// interrupted (or for -for). Wiring only: package serve does the work.
func (e *env) cmdServe(args []string) int {
	fs := e.newFlags("serve", "[-addr HOST:PORT] [-topics NAME:QUEUES,...] [-groups G,...] [-faults FILE] [fault flags] [-for D]",
		"Serves apache.rocketmq.v2.MessagingService (RocketMQ 5's gRPC protocol, as the proxy speaks it) over\n"+
			"popsim's POP engine, on the wall clock, so that an official RocketMQ 5 client, and the consumer code\n"+
			"built on it, can run against lease expiry, lost acks, revives and restarts. Point the client's\n"+
			"endpoint at -addr; it dials TLS and the server answers with a certificate made at start.\n\n"+
			"Faults come from -faults FILE (YAML: seed, ack_loss, ack_response_loss, receive_loss, change_loss,\n"+
			"send_loss, delay, revive_pause, restart_every, write_fail, retry_write_fail) and the fault flags,\n"+
			"which override the file. SIGHUP re-reads the file (and re-applies the flags); SIGUSR1 restarts the\n"+
			"server in place (the engine's volatile state and the client table are lost, the messages stay).\n\n"+
			"Not implemented: transactions, FIFO and delay messages (refused with\n"+
			"MESSAGE_PROPERTY_CONFLICT_WITH_TYPE), SQL92 filters, QueryAssignment and the push consumer's calls.\n"+
			"Stops on SIGINT/SIGTERM (or after -for) with exit 0 and prints the server's counters.")
	cfg := serve.DefaultConfig()
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "listen `address` (host:port; port 0 picks one)")
	fs.StringVar(&cfg.Advertise, "advertise", "", "`host:port` the routes name (default: the host the client dialed, with the listening port)")
	fs.StringVar(&cfg.Path, "path", serve.PathCheckpoint, "the engine's POP `path`: checkpoint (RocketMQ's default) or kv")
	topics := fs.String("topics", "TopicTest:4", "topics to serve, `name:queues,...`")
	groups := fs.String("groups", "GroupTest", "consumer `groups` to create at start (others are created on first use)")
	fs.BoolVar(&cfg.Plaintext, "plaintext", false, "serve without TLS (official clients need a patched connection constructor for it)")
	faultsFile := fs.String("faults", "", "faults `file` (YAML), re-read on SIGHUP")
	var fl faultFlags
	fl.register(fs)
	forDur := fs.Duration("for", 0, "stop after this `duration` (0: run until interrupted)")
	if code, ok := e.parseNoArgs(fs, args); !ok {
		return code
	}
	var err error
	if cfg.Topics, err = serve.ParseTopics(*topics); err != nil {
		return e.badInput("%v", err)
	}
	cfg.Groups = serve.ParseList(*groups)
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	load := func() (serve.Faults, error) {
		var f serve.Faults
		if *faultsFile != "" {
			if f, err = serve.LoadFaults(*faultsFile); err != nil {
				return f, err
			}
		}
		fl.apply(&f, set)
		return f, f.Validate()
	}
	if cfg.Faults, err = load(); err != nil {
		return e.badInput("%v", err)
	}
	var mu sync.Mutex // the server logs from its goroutines
	cfg.Logf = func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(e.stdout, "%s %s\n", e.clock().Format("15:04:05.000"), fmt.Sprintf(format, a...))
	}
	s, err := serve.New(cfg)
	if err != nil {
		return e.badInput("%v", err)
	}
	if err := s.Start(); err != nil {
		return e.badInput("%v", err)
	}
	defer func() {
		s.Stop()
		st := s.Stats()
		cfg.Logf("stopped: %d sent, %d acked, %d renewed (%d by the proxy), %d revived, %d to DLQ; lost by faults: %d acks, %d ack responses, %d receives, %d renewals, %d sends; %d restarts",
			st.Sent, st.Acks, st.Renewals, st.AutoRenewals, st.Revived, st.Forwarded,
			st.AcksLost, st.AckResponsesLost, st.ReceivesLost, st.ChangesLost, st.SendsLost, st.Restarts)
	}()
	sig := make(chan os.Signal, 4)
	signal.Notify(sig, syscall.SIGHUP, syscall.SIGUSR1)
	defer signal.Stop(sig)
	var timeout <-chan time.Time
	if *forDur > 0 {
		t := time.NewTimer(*forDur)
		defer t.Stop()
		timeout = t.C
	}
	for {
		select {
		case <-e.context().Done():
			return exitOK
		case <-timeout:
			return exitOK
		case x := <-sig:
			if x == syscall.SIGUSR1 {
				s.Restart()
				continue
			}
			f, err := load()
			if err == nil {
				err = s.SetFaults(f)
			}
			if err != nil {
				cfg.Logf("SIGHUP: faults unchanged: %v", err)
			}
		}
	}
}

// faultFlags are the faults settable on the command line.
type faultFlags struct {
	f serve.Faults
}

func (ff *faultFlags) register(fs *flag.FlagSet) {
	fs.Uint64Var(&ff.f.Seed, "fault-seed", 0, "`seed` of the fault draws")
	fs.Float64Var(&ff.f.AckLoss, "ack-loss", 0, "`fraction` of ack requests lost (the message comes back)")
	fs.Float64Var(&ff.f.AckResponseLoss, "ack-response-loss", 0, "`fraction` of ack responses lost (the ack took effect)")
	fs.Float64Var(&ff.f.ReceiveLoss, "receive-loss", 0, "`fraction` of receive responses lost (leased, never delivered)")
	fs.Float64Var(&ff.f.ChangeLoss, "change-loss", 0, "`fraction` of ChangeInvisibleDuration responses lost")
	fs.Float64Var(&ff.f.SendLoss, "send-loss", 0, "`fraction` of send responses lost (the client's retry stores a duplicate)")
	fs.DurationVar(&ff.f.Delay, "delay", 0, "hold every response this `long`")
	fs.BoolVar(&ff.f.RevivePause, "revive-pause", false, "pause the revive loop (expired leases are not revived)")
	fs.DurationVar(&ff.f.RestartEvery, "restart-every", 0, "restart the server in place every `period` (0: never)")
}

// apply copies the flags given on the command line over f.
func (ff *faultFlags) apply(f *serve.Faults, set map[string]bool) {
	for name, copyIt := range map[string]func(){
		"fault-seed": func() { f.Seed = ff.f.Seed }, "ack-loss": func() { f.AckLoss = ff.f.AckLoss },
		"ack-response-loss": func() { f.AckResponseLoss = ff.f.AckResponseLoss }, "receive-loss": func() { f.ReceiveLoss = ff.f.ReceiveLoss },
		"change-loss": func() { f.ChangeLoss = ff.f.ChangeLoss }, "send-loss": func() { f.SendLoss = ff.f.SendLoss },
		"delay": func() { f.Delay = ff.f.Delay }, "revive-pause": func() { f.RevivePause = ff.f.RevivePause },
		"restart-every": func() { f.RestartEvery = ff.f.RestartEvery },
	} {
		if set[name] {
			copyIt()
		}
	}
}

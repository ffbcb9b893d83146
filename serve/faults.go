package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"go.yaml.in/yaml/v3"

	"popsim/pop"
)

// Faults are the failures the server injects so a user can watch a
// consumer survive them. Fractions are probabilities in [0, 1], drawn per
// request from a generator seeded with Seed, in the order the engine
// goroutine serves requests (wall-clock arrival order, so not repeatable
// across runs the way a simulation is).
//
// A lost request never reaches the engine and a lost response is dropped
// after the engine served the call; either way the client hears nothing
// and its call runs into its own deadline, as with a dropped packet.
type Faults struct {
	Seed uint64 `yaml:"seed"`
	// AckLoss loses ack requests: the lease stays, so the message comes
	// back when its invisible time ends.
	AckLoss float64 `yaml:"ack_loss"`
	// AckResponseLoss loses ack responses: the ack took effect, the client
	// only sees a timeout.
	AckResponseLoss float64 `yaml:"ack_response_loss"`
	// ReceiveLoss loses receive responses: the messages were leased (and
	// counted as delivered) but never reach the client; they come back
	// when their invisible time ends, with a higher delivery attempt.
	ReceiveLoss float64 `yaml:"receive_loss"`
	// ChangeLoss loses ChangeInvisibleDuration responses: the renewal took
	// effect (a new handle exists) but the client keeps its old handle.
	ChangeLoss float64 `yaml:"change_loss"`
	// SendLoss loses send responses: the message is stored, the client
	// retries with the same message id and the retry stores a duplicate.
	SendLoss float64 `yaml:"send_loss"`
	// Delay holds every response this long before answering.
	Delay time.Duration `yaml:"delay"`
	// RevivePause stops the revive loop (on the checkpoint path all of its
	// periodic work: the timer wheel, the buffer's scans and the revive
	// rounds): expired leases stay in flight (and keep their messages
	// invisible) until it is turned off.
	RevivePause bool `yaml:"revive_pause"`
	// RestartEvery restarts the engine on this period (0: never): the
	// broker's volatile state is lost, as on a broker restart.
	RestartEvery time.Duration `yaml:"restart_every"`
	// WriteFail and RetryWriteFail fail store writes (any write; writes of
	// retry copies during revive) inside the engine, which reports them.
	WriteFail      float64 `yaml:"write_fail"`
	RetryWriteFail float64 `yaml:"retry_write_fail"`
}

// minRestartEvery keeps a restart period from starving the server.
const minRestartEvery = time.Second

// Validate names the first field outside its range.
func (f *Faults) Validate() error {
	fractions := []struct {
		name string
		v    float64
	}{
		{"ack_loss", f.AckLoss}, {"ack_response_loss", f.AckResponseLoss}, {"receive_loss", f.ReceiveLoss},
		{"change_loss", f.ChangeLoss}, {"send_loss", f.SendLoss}, {"write_fail", f.WriteFail}, {"retry_write_fail", f.RetryWriteFail},
	}
	for _, x := range fractions {
		if math.IsNaN(x.v) || x.v < 0 || x.v > 1 {
			return fmt.Errorf("serve: fault %s = %v: want a fraction in [0, 1], e.g. 0.1", x.name, x.v)
		}
	}
	if f.Delay < 0 || f.Delay > time.Minute {
		return fmt.Errorf("serve: fault delay = %v: want 0 to 1m", f.Delay)
	}
	if f.RestartEvery != 0 && (f.RestartEvery < minRestartEvery || f.RestartEvery > 24*time.Hour) {
		return fmt.Errorf("serve: fault restart_every = %v: want 0 (never) or %v to 24h", f.RestartEvery, minRestartEvery)
	}
	return nil
}

// engineFaults is the part the engine applies itself, as data.
func (f *Faults) engineFaults() pop.Faults {
	return pop.Faults{Seed: f.Seed, WritePPM: ppm(f.WriteFail), RetryWritePPM: ppm(f.RetryWriteFail)}
}

func ppm(p float64) int64 { return int64(math.Round(p * 1e6)) }

// String lists the faults that are on, e.g. "ack_loss=0.1 delay=200ms", or
// "none".
func (f Faults) String() string {
	var b bytes.Buffer
	add := func(on bool, format string, v any) {
		if on {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, format, v)
		}
	}
	add(f.AckLoss > 0, "ack_loss=%v", f.AckLoss)
	add(f.AckResponseLoss > 0, "ack_response_loss=%v", f.AckResponseLoss)
	add(f.ReceiveLoss > 0, "receive_loss=%v", f.ReceiveLoss)
	add(f.ChangeLoss > 0, "change_loss=%v", f.ChangeLoss)
	add(f.SendLoss > 0, "send_loss=%v", f.SendLoss)
	add(f.Delay > 0, "delay=%v", f.Delay)
	add(f.RevivePause, "revive_pause=%v", f.RevivePause)
	add(f.RestartEvery > 0, "restart_every=%v", f.RestartEvery)
	add(f.WriteFail > 0, "write_fail=%v", f.WriteFail)
	add(f.RetryWriteFail > 0, "retry_write_fail=%v", f.RetryWriteFail)
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// ParseFaults reads a faults file (YAML, the field names of Faults' tags);
// an unknown key is an error, so a typo does not silently turn a fault off.
func ParseFaults(data []byte) (Faults, error) {
	var f Faults
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Faults{}, fmt.Errorf("serve: faults: %v", err)
	}
	if err := f.Validate(); err != nil {
		return Faults{}, err
	}
	return f, nil
}

// LoadFaults reads and parses a faults file.
func LoadFaults(path string) (Faults, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Faults{}, fmt.Errorf("serve: faults file: %v", err)
	}
	f, err := ParseFaults(data)
	if err != nil {
		return Faults{}, fmt.Errorf("%v (in %s)", err, path)
	}
	return f, nil
}

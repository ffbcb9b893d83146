package sqs

import (
	"fmt"
	"regexp"
)

// Config is the service-wide configuration: where the queues live (their
// ARNs) and the distributed-queue parameters AWS documents but does not
// expose as queue attributes. DefaultConfig gives AWS's values.
type Config struct {
	// Region and AccountID make queue ARNs:
	// arn:aws:sqs:<Region>:<AccountID>:<name>. A RedrivePolicy names its
	// dead-letter queue by ARN.
	Region    string
	AccountID string

	// Servers is how many storage servers a queue's messages are spread
	// over (1..64). A short poll (WaitTimeSeconds 0) queries the servers
	// its request's Sample selects; a long poll queries all of them
	// ("Amazon SQS short and long polling"). Standard messages live on
	// server seq mod Servers, FIFO message groups on hash(group) mod
	// Servers. AWS does not publish the number; the default is 8.
	Servers int

	// StandardInFlightLimit is the in-flight limit of a standard queue
	// (120,000): a ReceiveMessage at the limit fails with OverLimit.
	StandardInFlightLimit int
	// FifoInFlightLimit is the in-flight limit of a FIFO queue (120,000 in
	// the current guide; 20,000 in older versions): at the limit a receive
	// returns no messages and no error.
	FifoInFlightLimit int
	// FifoScanWindow is how many of its oldest messages a FIFO queue looks
	// through to find available message groups (120,000, the same figure as
	// the in-flight limit): a backlog in one group longer than this hides
	// the groups behind it.
	FifoScanWindow int

	// HandleSalt is mixed into every receipt handle's check tag, so that
	// two services (or two runs) give different handles for the same
	// receive. It is data: the caller draws it if it wants it random.
	HandleSalt uint64
}

// DefaultConfig returns AWS's documented values.
func DefaultConfig() Config {
	return Config{
		Region:                "us-east-1",
		AccountID:             "000000000000",
		Servers:               8,
		StandardInFlightLimit: 120000,
		FifoInFlightLimit:     120000,
		FifoScanWindow:        120000,
	}
}

// MaxServers is the largest Config.Servers: a Sample is a 64-bit mask.
const MaxServers = 64

var (
	regionRE  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
	accountRE = regexp.MustCompile(`^[0-9]{12}$`)
)

// Validate returns an error naming the first field out of range.
func (c Config) Validate() error {
	switch {
	case !regionRE.MatchString(c.Region):
		return fmt.Errorf("sqs: config Region %q: want an AWS region name such as us-east-1", c.Region)
	case !accountRE.MatchString(c.AccountID):
		return fmt.Errorf("sqs: config AccountID %q: want 12 digits", c.AccountID)
	case c.Servers < 1 || c.Servers > MaxServers:
		return fmt.Errorf("sqs: config Servers %d out of range: want 1..%d", c.Servers, MaxServers)
	case c.StandardInFlightLimit < 1:
		return fmt.Errorf("sqs: config StandardInFlightLimit %d out of range: want >= 1 (AWS: 120000)", c.StandardInFlightLimit)
	case c.FifoInFlightLimit < 1:
		return fmt.Errorf("sqs: config FifoInFlightLimit %d out of range: want >= 1 (AWS: 120000)", c.FifoInFlightLimit)
	case c.FifoScanWindow < 1:
		return fmt.Errorf("sqs: config FifoScanWindow %d out of range: want >= 1 (AWS: 120000)", c.FifoScanWindow)
	}
	return nil
}

// ARN returns the ARN of the queue called name in this configuration.
func (c Config) ARN(name string) string {
	return "arn:aws:sqs:" + c.Region + ":" + c.AccountID + ":" + name
}

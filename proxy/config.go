package proxy

import (
	"fmt"

	"popsim/clock"
)

// Config is the proxy's settings (ProxyConfig), with RocketMQ's names and
// defaults.
type Config struct {
	// EnableProxyAutoRenew (true): receives that ask for auto-renew get it.
	EnableProxyAutoRenew bool
	// DefaultInvisibleTime (defaultInvisibleTimeMills, 60 s) is the invisible
	// time of an auto-renewed receive, whatever the client asked.
	DefaultInvisibleTime clock.Duration
	// MinInvisibleTimeForRecv (minInvisibleTimeMillsForRecv, 10 s) and
	// MaxInvisibleTime (maxInvisibleTimeMills, 12 h; 0 disables the max)
	// bound a receive's invisible time.
	MinInvisibleTimeForRecv clock.Duration
	MaxInvisibleTime        clock.Duration
	// MinLongPollingTimeout and MaxLongPollingTimeout
	// (grpcClientConsumerMin/MaxLongPollingTimeoutMillis, 5 s and 20 s)
	// clamp a receive's polling time.
	MinLongPollingTimeout clock.Duration
	MaxLongPollingTimeout clock.Duration
	// RenewAheadTime (renewAheadTimeMillis, 10 s): a managed handle is
	// renewed this long before it expires.
	RenewAheadTime clock.Duration
	// RenewMaxTime (renewMaxTimeMillis, 3 h): past this since the message
	// was received, one last renewal with the retry policy, then none.
	RenewMaxTime clock.Duration
	// MaxRenewRetryTimes (maxRenewRetryTimes, 3): failed renewal attempts
	// before the proxy gives a handle up.
	MaxRenewRetryTimes int
}

// DefaultConfig is ProxyConfig's defaults.
func DefaultConfig() Config {
	return Config{
		EnableProxyAutoRenew:    true,
		DefaultInvisibleTime:    60 * clock.Second,
		MinInvisibleTimeForRecv: 10 * clock.Second,
		MaxInvisibleTime:        12 * clock.Hour,
		MinLongPollingTimeout:   5 * clock.Second,
		MaxLongPollingTimeout:   20 * clock.Second,
		RenewAheadTime:          10 * clock.Second,
		RenewMaxTime:            3 * clock.Hour,
		MaxRenewRetryTimes:      3,
	}
}

// MaxBatch is ProxyUtils.MAX_MSG_NUMS_FOR_POP_REQUEST: a larger batch is
// clamped to it.
const MaxBatch = 32

// MaxChangeInvisibleTime is ChangeInvisibleDuration's limit (12 h).
const MaxChangeInvisibleTime = 12 * clock.Hour

// Validate reports the first setting outside its range.
func (c *Config) Validate() error {
	for _, d := range []struct {
		name   string
		v, min clock.Duration
	}{
		{"defaultInvisibleTimeMills", c.DefaultInvisibleTime, clock.Millisecond},
		{"minInvisibleTimeMillsForRecv", c.MinInvisibleTimeForRecv, 0},
		{"maxInvisibleTimeMills", c.MaxInvisibleTime, 0},
		{"grpcClientConsumerMinLongPollingTimeoutMillis", c.MinLongPollingTimeout, 0},
		{"grpcClientConsumerMaxLongPollingTimeoutMillis", c.MaxLongPollingTimeout, c.MinLongPollingTimeout},
		{"renewAheadTimeMillis", c.RenewAheadTime, 0},
		{"renewMaxTimeMillis", c.RenewMaxTime, 0},
	} {
		if d.v < d.min {
			return fmt.Errorf("proxy: %s = %v: want at least %v", d.name, d.v.Std(), d.min.Std())
		}
	}
	if c.MaxInvisibleTime > 0 && c.MaxInvisibleTime < c.MinInvisibleTimeForRecv {
		return fmt.Errorf("proxy: maxInvisibleTimeMills = %v is below minInvisibleTimeMillsForRecv = %v", c.MaxInvisibleTime.Std(), c.MinInvisibleTimeForRecv.Std())
	}
	if c.MaxRenewRetryTimes < 0 {
		return fmt.Errorf("proxy: maxRenewRetryTimes = %d: want >= 0", c.MaxRenewRetryTimes)
	}
	return nil
}

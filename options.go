package lock

import (
	"fmt"
	"time"
	"unicode/utf8"
)

const (
	// DefaultTTL is the lease a lock is granted without [WithTTL].
	DefaultTTL = 10 * time.Second

	// MinTTL is the shortest TTL accepted. Below it, the drift allowance
	// would eat most of the lease.
	MinTTL = 10 * time.Millisecond

	// MaxTTL is the longest TTL accepted.
	MaxTTL = 30 * 24 * time.Hour

	// DefaultDriftFactor is the share of the TTL that is subtracted from a
	// lock's validity for clock drift between the client and the backend,
	// on top of a fixed 2ms, unless [WithDriftFactor] says otherwise.
	DefaultDriftFactor = 0.01

	// MaxKeyLen is the longest key accepted, in bytes. Every driver stores
	// keys of up to this length.
	MaxKeyLen = 512
)

// fixedDrift is the part of the drift allowance that does not depend on
// the TTL, as in the Redis distlock document.
const fixedDrift = 2 * time.Millisecond

// An Option changes how one acquisition is made. Options are applied in
// order, and a later one overrides an earlier one of the same kind. Options
// given to [Open] or [OpenConnector] are the client's defaults, which each
// call's own options override.
type Option func(*options)

type options struct {
	ttl   time.Duration
	retry RetryStrategy
	drift float64
	tag   string // appended to the random value; set by Election only
}

func defaultOptions() options {
	return options{ttl: DefaultTTL, retry: DefaultRetry, drift: DefaultDriftFactor}
}

// WithTTL sets the lease of the lock, which is how long it stays held if
// its holder vanishes. It must be within [MinTTL, MaxTTL]. The default is
// [DefaultTTL].
// The lock's validity ([Lock.ValidUntil]) is the TTL minus an allowance for
// clock drift (see [WithDriftFactor]), counted from before the request was
// sent.
func WithTTL(ttl time.Duration) Option {
	return func(o *options) { o.ttl = ttl }
}

// WithRetry sets the strategy [Client.Acquire] follows between attempts
// (see [RetryStrategy]). The default is [DefaultRetry]. [Client.TryAcquire]
// ignores it.
func WithRetry(s RetryStrategy) Option {
	return func(o *options) { o.retry = s }
}

// WithDriftFactor sets the share of the TTL that, with a fixed 2ms, is
// subtracted from a lock's validity to allow for the backend's clock running
// faster than the client's. It must be in [0, 0.5). The default is
// [DefaultDriftFactor].
func WithDriftFactor(f float64) Option {
	return func(o *options) { o.drift = f }
}

// apply builds the options of one call from the client's defaults and
// the call's own, and checks them with the key.
func apply(key string, defaults, opts []Option) (options, error) {
	o := defaultOptions()
	for _, list := range [2][]Option{defaults, opts} {
		for _, opt := range list {
			if opt == nil {
				return o, fmt.Errorf("%w: nil Option", ErrInvalidOption)
			}
			opt(&o)
		}
	}
	if err := checkKey(key); err != nil {
		return o, err
	}
	return o, checkOptions(&o)
}

// checkOptions checks options built by apply.
func checkOptions(o *options) error {
	if !(o.drift >= 0 && o.drift < 0.5) { // also refuses NaN
		return fmt.Errorf("%w: drift factor %v is outside [0, 0.5)", ErrInvalidOption, o.drift)
	}
	if err := checkTTL(o.ttl); err != nil {
		return err
	}
	return validateRetry(o.retry)
}

// checkDefaults checks a client's default options.
func checkDefaults(defaults []Option) error {
	_, err := apply("defaults", defaults, nil)
	return err
}

func checkKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty", ErrInvalidKey)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: %d bytes long, over the maximum of %d", ErrInvalidKey, len(key), MaxKeyLen)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: not valid UTF-8", ErrInvalidKey)
	}
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			return fmt.Errorf("%w: contains a NUL byte", ErrInvalidKey)
		}
	}
	return nil
}

func checkTTL(ttl time.Duration) error {
	if ttl < MinTTL || ttl > MaxTTL {
		return fmt.Errorf("%w: %v is outside [%v, %v]", ErrInvalidTTL, ttl, MinTTL, MaxTTL)
	}
	return nil
}

// drift is the allowance subtracted from a TTL to get a lock's validity.
func drift(ttl time.Duration, factor float64) time.Duration {
	return time.Duration(float64(ttl)*factor) + fixedDrift
}

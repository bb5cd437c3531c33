package lock

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/distlock/lock/driver"
)

// CheckSettings connects to the backend if the client has not yet, reads
// what it says of its settings, and reports those that weaken the
// library's promises: most severe first, each with what can go wrong and
// what to change. It changes nothing. An empty result means the driver
// found nothing to say; findings of severity [driver.Error] mean a promise
// can break with nothing else failing. On a driver that has no such check
// (one without driver.SettingsChecker), the error matches
// [errors.ErrUnsupported].
func (c *Client) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	cn, err := c.ready(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock: check settings: %w", err)
	}
	sc, ok := cn.Conn.(driver.SettingsChecker)
	if !ok {
		return nil, fmt.Errorf("lock: check settings: driver %T has no settings check: %w", cn.Conn, errors.ErrUnsupported)
	}
	if !c.enter() {
		return nil, fmt.Errorf("lock: check settings: %w", ErrClosed)
	}
	defer c.leave()
	fs, err := sc.CheckSettings(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock: check settings: %w", classify(ctx, err))
	}
	slices.SortStableFunc(fs, func(a, b driver.Finding) int { return int(b.Severity) - int(a.Severity) })
	return fs, nil
}

package nats

import (
	"context"

	"github.com/distlock/lock/driver"
)

var _ driver.SettingsChecker = (*conn)(nil)

// CheckSettings reads the bucket's stream at its leader and judges it as
// Connect does, and the fsync setting where the configuration names a
// monitoring endpoint (monitor= in a DSN). See DESIGN.md ("What Connect
// checks").
func (c *conn) CheckSettings(ctx context.Context) ([]driver.Finding, error) {
	ctx, done := c.bound(ctx)
	defer done()
	sc, err := c.streamConfig(ctx, false)
	if err != nil {
		return nil, fail(ctx, "check settings", err)
	}
	fs := judge(sc, c.cfg)
	if c.cfg.Monitor != "" {
		if f := c.checkFsync(ctx); f != nil {
			fs = append(fs, *f)
		}
	}
	return fs, nil
}

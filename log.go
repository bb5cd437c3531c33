package lock

import "log/slog"

// SetLogger sets the logger the client reports unusual events to: a lock
// lost while [Client.Do] ran, a release or cleanup that failed. Successful
// operations are logged at debug level only. The default is
// [slog.Default]; nil restores it. SetLogger is safe to call at any time.
func (c *Client) SetLogger(l *slog.Logger) { c.logger.Store(l) }

// log returns the client's logger.
func (c *Client) log() *slog.Logger {
	if l := c.logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

package lock

import "log/slog"

// SetLogger sets the logger the client reports unusual events to, at warn
// level: a lock lost while kept alive, a release or cleanup that failed.
// At debug level it also logs every acquire, extend, release and
// [Client.Do] as it ends: the message "lock: OP" with the attributes key,
// err, attempts, wait, token and held (see [Event]). The default is
// [slog.Default]; nil restores it. SetLogger is safe to call at any time.
func (c *Client) SetLogger(l *slog.Logger) { c.logger.Store(l) }

// log returns the client's logger.
func (c *Client) log() *slog.Logger {
	if l := c.logger.Load(); l != nil {
		return l
	}
	return slog.Default()
}

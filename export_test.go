package lock

// Queues returns the number of keys c has waiting Acquire calls for.
func Queues(c *Client) int {
	c.waits.mu.Lock()
	defer c.waits.mu.Unlock()
	return len(c.waits.m)
}

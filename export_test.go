package lock

// Turns returns the number of keys c has waiting Acquire calls for.
func Turns(c *Client) int {
	c.turnsMu.Lock()
	defer c.turnsMu.Unlock()
	return len(c.turns)
}

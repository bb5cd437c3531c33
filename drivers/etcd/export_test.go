package etcd

import "google.golang.org/grpc"

// AddDialOptionsForTest makes the clients that c creates dial with opts
// too (the tests count requests with an interceptor).
func AddDialOptionsForTest(c *Connector, opts ...grpc.DialOption) {
	c.dialOptions = append(c.dialOptions, opts...)
}

// PreferredForTest returns the endpoint that cn (a connection of a
// connector opened by DSN) sends its next request to.
func PreferredForTest(cn any) string {
	rs := cn.(*conn).routes
	return rs.all[rs.pref.Load()].name
}

// SetListPageForTest makes ListScratch read n keys a request, until the
// test ends.
func SetListPageForTest(t interface{ Cleanup(func()) }, n int64) {
	old := listPage
	listPage = n
	t.Cleanup(func() { listPage = old })
}

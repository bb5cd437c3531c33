// Package verifyall holds a test, and nothing else: 'distlock verify' on
// every networked driver, on the test servers of scripts/services.sh
// (build tag servers). The command's own tests run it on PostgreSQL and
// goredis, under the locks of that package; here each driver's run takes
// its servers' lock, shared, only while it runs, so that it waits for no
// other package longer than that package's own fault tests.
package verifyall

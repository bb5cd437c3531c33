package zookeeper

// LateCreates returns the number of creates whose attempt gave up waiting
// for them (their outcome was then recorded for the reaper).
func LateCreates() int64 { return lateCreates.Load() }

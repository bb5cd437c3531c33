package etcd_test

import "testing"

// Eight worker processes take permits of one semaphore of 3 on the
// cluster, under TestProcesses's nemesis: never more than 3 holders, no
// overlap or token regression on a slot.
func TestProcesses_semaphore(t *testing.T) { processRuns().RunSemaphore(t, 3, 8) }

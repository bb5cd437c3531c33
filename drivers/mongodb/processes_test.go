package mongodb_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/conformance"
	"github.com/distlock/lock/drivers/mongodb"
	"github.com/distlock/lock/drivertest"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Worker processes contend on one collection while the nemesis pauses
// holders past their TTL and kills FerretDB (SIGKILL, a crash) and starts
// it again on the same data: no overlap, no token regression, no lost
// write, no grant live a TTL after the run. And the count of live grants
// sees a leaky variant's.
func TestProcesses(t *testing.T) {
	drivertest.ProcessRuns{
		Driver:    mongodb.Driver{},
		DSN:       procsDSN,
		Settings:  conformance.Processes{Duration: conformance.SoakDuration(8 * time.Second), Fenced: true, PauseHolders: true},
		Leftovers: procsLeftovers,
		Nemesis: func(t *testing.T, _ string, p *conformance.Processes) {
			p.Actions = map[string]func(*testing.T){"restart-ferretdb": restartFerretDB}
		},
	}.Run(t)
}

// procsDSN is the DSN of a fault run on the collection coll.
func procsDSN(t testing.TB, coll string) string {
	return drivertest.WithParams(server(t), "distlock_database", testDB, "distlock_collection", coll)
}

// procsLeftovers counts the live grants of the collection coll, dropped
// when the test ends.
func procsLeftovers(t *testing.T, coll string) func(*testing.T) int {
	grants := procsCollection(t, server(t), coll)
	return func(t *testing.T) int { return liveGrants(t, grants) }
}

// procsCollection is a fault run's grants collection, dropped when the
// test ends.
func procsCollection(t *testing.T, uri, coll string) *mongo.Collection {
	grants := adminClient(t, uri).Database(testDB).Collection(coll)
	t.Cleanup(func() { grants.Drop(context.Background()) })
	return grants
}

// restartFerretDB kills our FerretDB (SIGKILL: no clean shutdown) and
// starts it again on the same data with scripts/services.sh.
func restartFerretDB(t *testing.T) {
	dir := filepath.Join(os.Getenv("DISTLOCK_SERVICES_DIR"), "ferretdb")
	pid, ok := drivertest.ServerPID(dir, "ferretdb.pid")
	if !ok {
		t.Fatalf("no live FerretDB of ours in %s", dir)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, alive := drivertest.ServerPID(dir, "ferretdb.pid"); !alive {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("FerretDB (pid %d) still alive 10s after SIGKILL", pid)
		}
	}
	// A killed process's listening socket can outlive it for a moment on a
	// loaded machine, and services.sh refuses a port that something else
	// holds.
	if u, err := url.Parse(os.Getenv("DISTLOCK_MONGODB_URI")); err == nil && u.Host != "" {
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			c, err := net.DialTimeout("tcp", u.Host, time.Second)
			if err != nil {
				break
			}
			c.Close()
			if time.Now().After(deadline) {
				t.Fatalf("%s still accepts connections 10s after FerretDB (pid %d) died", u.Host, pid)
			}
		}
	}
	script := drivertest.ServicesScript(t)
	if out, err := exec.Command(script, "start-ferretdb").CombinedOutput(); err != nil {
		t.Fatalf("services.sh start-ferretdb: %v\n%s", err, out)
	}
}

// liveGrants counts the keys in grants whose latest grant (the highest
// fence: a release inserts a released successor, see DESIGN.md) is neither
// released nor expired; FerretDB runs on this machine's clock.
func liveGrants(t *testing.T, grants *mongo.Collection) int {
	// One batch holds every grant: FerretDB forgets a cursor across its
	// restarts (and did once, mid-count, in CI), so no getMore is sent. A
	// failed count is tried again, since the nemesis may be restarting it.
	var err error
	for range 3 {
		var n int
		if n, err = countLive(grants); err == nil {
			return n
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("counting leftovers: %v", err)
	return 0
}

func countLive(grants *mongo.Collection) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cur, err := grants.Find(ctx, bson.D{{Key: "key", Value: bson.D{{Key: "$exists", Value: true}}}},
		options.Find().SetBatchSize(1<<20).
			SetProjection(bson.D{{Key: "key", Value: 1}, {Key: "fence", Value: 1}, {Key: "released", Value: 1}, {Key: "expires", Value: 1}}))
	if err != nil {
		return 0, err
	}
	var all []struct {
		Key      string        `bson:"key"`
		Fence    int64         `bson:"fence"`
		Released bool          `bson:"released"`
		Expires  bson.DateTime `bson:"expires"`
	}
	if err := cur.All(ctx, &all); err != nil {
		return 0, err
	}
	latest := make(map[string]int)
	for i, g := range all {
		if j, ok := latest[g.Key]; !ok || all[j].Fence < g.Fence {
			latest[g.Key] = i
		}
	}
	now := bson.NewDateTimeFromTime(time.Now())
	n := 0
	for _, i := range latest {
		if !all[i].Released && all[i].Expires > now {
			n++
		}
	}
	return n, nil
}

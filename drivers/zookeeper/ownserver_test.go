package zookeeper_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/distlock/lock/drivertest"
)

// The jars scripts/services.d/zookeeper.sh runs the test ensemble from:
// Debian's zookeeper package and its logger.
const (
	zkJar    = "/usr/share/java/zookeeper.jar"
	zkLogger = "/usr/share/java/slf4j-simple.jar"
)

// startEnsemble starts a ZooKeeper ensemble of the test's own, the way
// scripts/services.d/zookeeper.sh starts the test ensemble (a JVM per
// member, from Debian's jars, a 100ms tick): members JVMs at once on free
// ports of 127.0.0.1, with their data under t.TempDir() and extra
// (zoo.cfg lines) in each configuration. One member runs standalone, as
// zkServer.sh runs a configuration without server lines. It waits until
// every member serves (srvr tells its mode), and the members are stopped
// by their PIDs when the test ends. It returns their client addresses.
// The test is skipped without java or the jars.
func startEnsemble(t *testing.T, members int, extra string) []string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("no java: scripts/services.sh up installs the JRE and ZooKeeper")
	}
	for _, jar := range []string{zkJar, zkLogger} {
		if _, err := os.Stat(jar); err != nil {
			t.Skipf("no %s: scripts/services.sh up installs it", jar)
		}
	}
	dir := t.TempDir()
	clients := make([]string, members)
	var servers strings.Builder
	for i := range members {
		clients[i] = drivertest.FreeAddr(t)
		if members > 1 {
			fmt.Fprintf(&servers, "server.%d=%s:%s\n", i+1, drivertest.FreeAddr(t), port(t, drivertest.FreeAddr(t)))
		}
	}
	if members > 1 {
		servers.WriteString("standaloneEnabled=false\n")
	}
	for i := range members {
		mdir := filepath.Join(dir, fmt.Sprintf("zk%d", i+1))
		if err := os.MkdirAll(filepath.Join(mdir, "data"), 0o700); err != nil {
			t.Fatal(err)
		}
		host, p, _ := net.SplitHostPort(clients[i])
		cfg := fmt.Sprintf("tickTime=100\ninitLimit=300\nsyncLimit=100\ndataDir=%s\nclientPortAddress=%s\nclientPort=%s\n"+
			"admin.enableServer=false\n4lw.commands.whitelist=srvr\nforceSync=no\npreAllocSize=1024\n%s%s\n",
			filepath.Join(mdir, "data"), host, p, servers.String(), extra)
		for name, data := range map[string]string{"zoo.cfg": cfg, "data/myid": fmt.Sprint(i + 1)} {
			if err := os.WriteFile(filepath.Join(mdir, name), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		log, err := os.Create(filepath.Join(mdir, "zookeeper.log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(java, "-Xms16m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
			"-Djava.net.preferIPv4Stack=true", "-Dzookeeper.admin.enableServer=false", "-Dzookeeper.jmx.log4j.disable=true",
			"-Dzookeeper.fastleader.maxNotificationInterval=1000",
			"-cp", zkJar+":"+zkLogger, "org.apache.zookeeper.server.quorum.QuorumPeerMain", "zoo.cfg")
		cmd.Dir, cmd.Stdout, cmd.Stderr = mdir, log, log
		err = cmd.Start()
		log.Close()
		if err != nil {
			t.Fatalf("starting ZooKeeper: %v", err)
		}
		drivertest.StopAtEnd(t, cmd, syscall.SIGTERM, 5*time.Second)
	}
	var wg sync.WaitGroup
	errs := make([]error, members)
	for i, addr := range clients {
		wg.Go(func() { errs[i] = waitServing(addr, 30*time.Second) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			b, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("zk%d", i+1), "zookeeper.log"))
			t.Fatalf("ZooKeeper member %d (%s): %v; its log:\n%s", i+1, clients[i], err, b)
		}
	}
	return clients
}

// waitServing asks the member at addr for srvr until it tells its mode
// (a member outside a quorum answers that it is not serving), or within
// fails.
func waitServing(addr string, within time.Duration) error {
	var last string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mode, err := srvrMode(addr)
		if err == nil && mode != "" {
			return nil
		}
		last = fmt.Sprint(err)
	}
	return fmt.Errorf("not serving within %v (last: %s)", within, last)
}

// srvrMode returns the Mode line of the member's answer to srvr, or "".
func srvrMode(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if mode, ok := strings.CutPrefix(sc.Text(), "Mode: "); ok {
			return mode, nil
		}
	}
	return "", sc.Err()
}

// port returns the port of addr, host:port.
func port(t testing.TB, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

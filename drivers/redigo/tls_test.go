package redigo_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/distlock/lock"
	"github.com/distlock/lock/drivers/redigo"
	"github.com/distlock/lock/drivers/redlock"
)

// tlsServer starts a redis-server of the test's own that speaks only TLS,
// with a self-signed certificate for 127.0.0.1 and requirepass set, and
// returns its address and certificate.
func tlsServer(t *testing.T) (addr string, cert *x509.Certificate) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("redis-server is not installed, and CI is set")
		}
		t.Skip("redis-server is not installed")
	}
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "distlock test"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true,

		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if cert, err = x509.ParseCertificate(der); err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0") // a free port
	if err != nil {
		t.Fatal(err)
	}
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", "0", "--tls-port", port, "--bind", "127.0.0.1",
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-auth-clients", "no",
		"--requirepass", password, "--save", "", "--appendonly", "no", "--dir", dir)
	log, err := os.Create(filepath.Join(dir, "redis.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		log.Close()
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr, cert
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(filepath.Join(dir, "redis.log"))
			t.Fatalf("redis-server with TLS did not start on %s: %s", addr, out)
		}
	}
}

// lockAndWake checks that c can take and release a lock, and that a waiter
// wakes at the release (over a publish/subscribe connection of its own).
func lockAndWake(t *testing.T, c *lock.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	key := "tls-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	l, err := c.TryAcquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		l, err := c.Acquire(ctx, key, lock.WithRetry(lock.FixedDelay(time.Minute)))
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not wake at the release")
	}
}

func TestTLS_DSN(t *testing.T) {
	addr, _ := tlsServer(t)
	t.Run("skipVerify", func(t *testing.T) {
		c, err := lock.Open("redigo", "rediss://:"+password+"@"+addr+"/0?skip_verify=true&node_timeout=500ms")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		lockAndWake(t, c)
	})
	for name, dsn := range map[string]string{
		"unknownCertificate": "rediss://:" + password + "@" + addr + "?node_timeout=500ms",
		"noPassword":         "rediss://" + addr + "?skip_verify=true&node_timeout=500ms",
		"wrongPassword":      "rediss://:not-" + password + "@" + addr + "?skip_verify=true&node_timeout=500ms",
		"plainText":          "redis://:" + password + "@" + addr + "?node_timeout=500ms",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := lock.Open("redigo", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.TryAcquire(context.Background(), "tls-refused")
			t.Log(err)
			if err == nil || errors.Is(err, lock.ErrNotAcquired) {
				t.Fatalf("TryAcquire = %v, want the node's failure", err)
			}
			if strings.Contains(err.Error(), password) {
				t.Errorf("the error repeats the password: %v", err)
			}
		})
	}
}

// Pools built with redis.DialURLContext and a TLS configuration of the
// caller's work through New, and the certificate is verified.
func TestTLS_New(t *testing.T) {
	addr, cert := tlsServer(t)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	pool := &redis.Pool{
		MaxIdle: 2,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialURLContext(ctx, "rediss://:"+password+"@"+addr,
				redis.DialTLSConfig(&tls.Config{RootCAs: roots}))
		},
	}
	defer pool.Close()
	// A TLS dial under the race detector on a loaded machine may not fit
	// in the default node timeout.
	conn, err := redigo.New([]*redis.Pool{pool}, redlock.WithNodeTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	c := lock.OpenConnector(conn)
	defer c.Close()
	lockAndWake(t, c)
}

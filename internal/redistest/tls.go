package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TLSServer is a redis-server of a test's own, on a free port of
// 127.0.0.1, that speaks only TLS, with a certificate signed by a CA the
// test made, and requires a password.
type TLSServer struct {
	Addr     string // host:port
	CAFile   string // PEM of the CA that signed the server's certificate
	Password string
}

// StartTLSServer starts a TLSServer, stopped (by its PID) when the test
// ends.
func StartTLSServer(t testing.TB) TLSServer {
	t.Helper()
	dir := t.TempDir()
	caFile, certFile, keyFile := writeCerts(t, dir)
	port := freePort(t)
	s := TLSServer{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), CAFile: caFile, Password: "tls-test-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	runRedis(t, dir, s.Addr, []string{"--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile, "--tls-auth-clients", "no",
		"--requirepass", s.Password, "--save", "", "--appendonly", "no", "--dir", dir})
	return s
}

// freePort returns a port of 127.0.0.1 that nothing listened on a moment
// ago (the kernel's choice: never a standard port).
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeCerts writes a CA and a server certificate for 127.0.0.1 that it
// signed, with the server's key, into dir.
func writeCerts(t testing.TB, dir string) (caFile, certFile, keyFile string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "distlock test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
	caCert, _ := x509.ParseCertificate(caDER)
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", leafDER), write("server-key.pem", "EC PRIVATE KEY", keyDER)
}

// URL is a rediss:// URL of s with password, verified with s's CA when
// withCA, and the query params (may be empty).
func (s TLSServer) URL(password string, withCA bool, params string) string {
	u := fmt.Sprintf("rediss://:%s@%s", password, s.Addr)
	sep := "?"
	if withCA {
		u += "?ca_file=" + s.CAFile
		sep = "&"
	}
	if params != "" {
		u += sep + params
	}
	return u
}

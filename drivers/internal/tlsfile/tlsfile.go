// Package tlsfile reads the TLS files that drivers' DSNs name.
package tlsfile

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CertPool returns a pool of the PEM certificates in the file at path:
// the CAs a driver trusts instead of the system's. Its errors name the path,
// which is not a secret, and nothing of the file's contents.
func CertPool(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no PEM certificate in %s", path)
	}
	return pool, nil
}

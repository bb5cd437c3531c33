package driver

import (
	"crypto/tls"
	"errors"
	"net"
)

// IsMisconfigured reports whether err holds one of the standard library's
// errors that retrying cannot fix. Those are a host name that does not
// resolve, and a TLS handshake that failed on a certificate or on a
// protocol mismatch. The core marks such errors as [ErrMisconfigured]
// itself. A driver uses IsMisconfigured where it must tell them apart
// before the core sees them, to skip cleaning up on a node that was never
// reached, say.
func IsMisconfigured(err error) bool {
	var (
		dns    *net.DNSError
		verify *tls.CertificateVerificationError
		header tls.RecordHeaderError
		alert  tls.AlertError
	)
	switch {
	case errors.As(err, &dns):
		return dns.IsNotFound
	case errors.As(err, &verify), errors.As(err, &header), errors.As(err, &alert):
		return true
	}
	return false
}

// Package faults holds the fault tests that need tools the library itself
// does not: slow and broken links through toxiproxy (github.com/Shopify/
// toxiproxy/v2, used as a library), on the real servers of
// scripts/services.sh. It is a module of its own, so that toxiproxy and
// what it brings (Prometheus, zerolog) stay out of the library's
// dependencies; make test runs it. It has no API: everything is in its
// tests.
package faults

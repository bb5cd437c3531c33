package mongodb_test

import (
	"io"
	"net"
	"slices"
	"sync"
	"testing"
)

// proxy is a TCP proxy to a server on 127.0.0.1 that a test can make
// silent (it then keeps every connection open and forwards nothing) or
// shut (it then closes every connection and refuses new ones).
type proxy struct {
	ln     net.Listener
	target string // "" forwards nowhere: silent from the start
	wg     sync.WaitGroup

	mu      sync.Mutex
	clients []net.Conn
	servers []net.Conn
	silent  bool
}

// newProxy starts a proxy to target, shut when the test ends. With an
// empty target, it is a server that accepts connections and never
// answers.
func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, silent: target == ""}
	p.wg.Go(p.serve)
	t.Cleanup(p.shut)
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.clients = append(p.clients, c)
		silent := p.silent
		p.mu.Unlock()
		if !silent {
			p.wg.Go(func() { p.forward(c) })
		}
	}
}

// forward copies between c and a connection to the target until either
// side ends; if the proxy fell silent meanwhile, c stays open.
func (p *proxy) forward(c net.Conn) {
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.silent {
		// Fell silent while dialing: silence did not see s to close it.
		p.mu.Unlock()
		s.Close()
		return
	}
	p.servers = append(p.servers, s)
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(s, c); done <- struct{}{} }()
	go func() { io.Copy(c, s); done <- struct{}{} }()
	<-done
	s.Close()
	p.mu.Lock()
	silent := p.silent
	p.mu.Unlock()
	if !silent {
		c.Close()
	}
	<-done
}

// silence stops forwarding: requests in flight and new ones get no answer.
func (p *proxy) silence() {
	p.mu.Lock()
	p.silent = true
	for _, s := range p.servers {
		s.Close()
	}
	p.mu.Unlock()
}

// shut closes the listener and every connection, and waits for the
// proxy's goroutines.
func (p *proxy) shut() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range slices.Concat(p.clients, p.servers) {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

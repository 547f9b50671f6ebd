package rt_test

import (
	"context"
	"crypto/tls"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yrpc/yrpc/internal/testcerts"
	"github.com/yrpc/yrpc/rt"
)

// Mutual TLS with both certificates swapped through the callbacks
// (GetCertificate on the server, GetClientCertificate on the client) while
// calls run: a long-lived client keeps calling on the connection it has,
// and reconnecting clients handshake again and again, each with the
// certificates of the moment. Every certificate is seen by the other side,
// calls go on through every swap, and none fails.
func TestCertificateRotationUnderLoad(t *testing.T) {
	checkLeaks(t)
	ca := testcerts.NewCA(t, "test CA")
	var srvCert, cliCert atomic.Pointer[tls.Certificate]
	issue := func(to *atomic.Pointer[tls.Certificate], l testcerts.Leaf) {
		c := ca.Issue(t, l)
		to.Store(&c)
	}
	issue(&srvCert, testcerts.Leaf{CN: "server-1"})
	issue(&cliCert, testcerts.Leaf{CN: "client-1", Client: true})
	var bySrv, byCli sync.Map // common names each side's handshakes saw
	saw := func(m *sync.Map) func(tls.ConnectionState) error {
		return func(cs tls.ConnectionState) error {
			m.Store(cs.PeerCertificates[0].Subject.CommonName, true)
			return nil
		}
	}
	e := newTLSEnv(t, &tls.Config{
		GetCertificate:   func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return srvCert.Load(), nil },
		ClientAuth:       tls.RequireAndVerifyClientCert,
		ClientCAs:        ca.Pool,
		VerifyConnection: saw(&bySrv),
	})
	ccfg := &tls.Config{
		RootCAs:              ca.Pool,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cliCert.Load(), nil },
		VerifyConnection:     saw(&byCli),
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }); wg.Wait() }
	var calls, steadyCalls, failed atomic.Int64
	one := func(cli *rt.Client) {
		calls.Add(1)
		if _, err := call(context.Background(), cli, &testDesc, 0, "x", rt.WithCallTimeout(10*time.Second)); err != nil {
			if failed.Add(1) <= 5 {
				t.Errorf("call failed: %v", err)
			}
		}
	}
	running := func() bool {
		select {
		case <-stop:
			return false
		default:
			return true
		}
	}
	steady := e.client(rt.WithTLS(ccfg))
	t.Cleanup(halt) // a failed wait stops the callers before the leak check
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for running() {
				one(steady)
				steadyCalls.Add(1)
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for running() {
				// A new client each round: a new handshake.
				cli, err := rt.NewClient(rt.WithAddrs(e.addr), rt.WithTLS(ccfg))
				if err != nil {
					t.Error(err)
					return
				}
				for range 10 {
					one(cli)
				}
				cli.Close()
			}
		}()
	}
	// Each pair of certificates serves handshakes on both sides, and both
	// kinds of client make calls, before the next pair replaces it.
	const perPhase = 100
	settled := func() {
		srvCN, cliCN := srvCert.Load().Leaf.Subject.CommonName, cliCert.Load().Leaf.Subject.CommonName
		all, st := calls.Load(), steadyCalls.Load()
		waitUntil(t, func() bool {
			_, s := byCli.Load(srvCN)
			_, c := bySrv.Load(cliCN)
			return s && c && calls.Load() >= all+perPhase && steadyCalls.Load() >= st+perPhase
		})
	}
	const phases = 6
	for i := 2; i <= phases; i++ {
		settled()
		issue(&srvCert, testcerts.Leaf{CN: "server-" + string(rune('0'+i))})
		issue(&cliCert, testcerts.Leaf{CN: "client-" + string(rune('0'+i)), Client: true})
	}
	settled()
	halt()
	if n := failed.Load(); n != 0 {
		t.Fatalf("%d of %d calls failed during rotation", n, calls.Load())
	}
	t.Logf("%d calls (%d on the long-lived client) over %d server and %d client certificates, 0 failed", calls.Load(), steadyCalls.Load(), phases, phases)
}

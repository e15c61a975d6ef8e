// An independent QUIB peer for tests/host/quib_test.py: quic-go 0.29 (Debian's
// golang-github-lucas-clemente-quic-go-dev, TLS 1.3 from qtls) instead of ngtcp2 and GnuTLS.
// It bridges one bidirectional QUIC stream to its stdin and stdout, so that a `wirekit iltp sync`
// on the stdio carrier runs the ILTP session through it, and it reports on stderr the ALPN and
// its own RFC 8446 section 7.5 exporter for the QUIB label.
//
//	quib_go_peer client HOST:PORT CA.pem [ALPN]   dial (QUIC v1), open the stream, bridge
//	quib_go_peer server CERT.pem KEY.pem [ALPN]   listen on 127.0.0.1:0 ("listening ADDR" on stderr),
//	                                              accept one connection and its stream, bridge
//
// When stdin ends the stream gets its FIN; when the peer's FIN arrives stdout is closed; once
// both directions ended the connection closes with application code 0.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	quic "github.com/lucas-clemente/quic-go"
)

const label = "lace-\U0001F5A7/quib/peer-proof-channel-binding-v1"

func fail(code int, format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "quib_go_peer: "+format+"\n", a...)
	os.Exit(code)
}

func report(conn quic.Connection) {
	st := conn.ConnectionState().TLS
	ex, err := st.ExportKeyingMaterial(label, []byte("iltp"), 32)
	if err != nil {
		fail(1, "exporter: %v", err)
	}
	fmt.Fprintf(os.Stderr, "alpn %s exporter %s\n", st.NegotiatedProtocol, hex.EncodeToString(ex))
}

func bridge(conn quic.Connection, st quic.Stream) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // stdin -> stream, then FIN
		defer wg.Done()
		io.Copy(st, os.Stdin)
		st.Close()
	}()
	go func() { // stream -> stdout, then EOF (a socket's write side is shut: stdin may share it)
		defer wg.Done()
		io.Copy(os.Stdout, st)
		if syscall.Shutdown(int(os.Stdout.Fd()), syscall.SHUT_WR) != nil {
			os.Stdout.Close()
		}
	}()
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // our last acknowledgements
	conn.CloseWithError(0, "")
	time.Sleep(100 * time.Millisecond)
	fmt.Fprintf(os.Stderr, "closed with code 0\n")
}

func main() {
	if len(os.Args) < 4 {
		fail(2, "usage: quib_go_peer client HOST:PORT CA.pem [ALPN] | server CERT.pem KEY.pem")
	}
	qconf := &quic.Config{Versions: []quic.VersionNumber{quic.Version1}, MaxIdleTimeout: 30 * time.Second}
	switch os.Args[1] {
	case "client":
		pem, err := os.ReadFile(os.Args[3])
		if err != nil {
			fail(1, "%v", err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		alpn := "QUIB/1"
		if len(os.Args) > 4 {
			alpn = os.Args[4]
		}
		tconf := &tls.Config{RootCAs: pool, ServerName: "localhost", NextProtos: []string{alpn},
			MinVersion: tls.VersionTLS13}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		conn, err := quic.DialAddrContext(ctx, os.Args[2], tconf, qconf)
		if err != nil {
			fail(3, "dial: %v", err)
		}
		report(conn)
		st, err := conn.OpenStreamSync(ctx)
		if err != nil {
			fail(3, "stream: %v", err)
		}
		bridge(conn, st)
	case "server":
		cert, err := tls.LoadX509KeyPair(os.Args[2], os.Args[3])
		if err != nil {
			fail(1, "%v", err)
		}
		alpn := "QUIB/1"
		if len(os.Args) > 4 {
			alpn = os.Args[4]
		}
		tconf := &tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{alpn},
			MinVersion: tls.VersionTLS13}
		ln, err := quic.ListenAddr("127.0.0.1:0", tconf, qconf)
		if err != nil {
			fail(1, "listen: %v", err)
		}
		fmt.Fprintf(os.Stderr, "listening %s\n", ln.Addr().String())
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := ln.Accept(ctx)
		if err != nil {
			fail(3, "accept: %v", err)
		}
		report(conn)
		st, err := conn.AcceptStream(ctx)
		if err != nil {
			fail(3, "stream: %v", err)
		}
		bridge(conn, st)
	default:
		fail(2, "unknown mode %s", os.Args[1])
	}
}

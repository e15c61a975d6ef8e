// snappy_peer: an independent Snappy peer for tests/eth/interop_test.py, built on
// github.com/golang/snappy (Debian golang-github-golang-snappy-dev). Reads stdin, writes stdout.
//
//	snappy_peer block-encode | block-decode | framed-encode | framed-decode
//
// Block modes treat stdin as one block (snappy.Encode / snappy.Decode); framed modes stream
// through snappy.NewBufferedWriter / snappy.NewReader. Any failure: a message on stderr, exit 2.
// Built offline by the test: GO111MODULE=off GOPATH=/usr/share/gocode go build.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"

	"github.com/golang/snappy"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "snappy_peer: "+format+"\n", args...)
	os.Exit(2)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: snappy_peer block-encode|block-decode|framed-encode|framed-decode")
		os.Exit(1)
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	switch os.Args[1] {
	case "block-encode", "block-decode":
		in, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail("read: %v", err)
		}
		var res []byte
		if os.Args[1] == "block-encode" {
			res = snappy.Encode(nil, in)
		} else if res, err = snappy.Decode(nil, in); err != nil {
			fail("decode: %v", err)
		}
		if _, err = out.Write(res); err != nil {
			fail("write: %v", err)
		}
	case "framed-encode":
		w := snappy.NewBufferedWriter(out)
		if _, err := io.Copy(w, os.Stdin); err != nil {
			fail("encode: %v", err)
		}
		if err := w.Close(); err != nil {
			fail("encode: %v", err)
		}
	case "framed-decode":
		if _, err := io.Copy(out, snappy.NewReader(os.Stdin)); err != nil {
			fail("decode: %v", err)
		}
	default:
		fmt.Fprintf(os.Stderr, "snappy_peer: unknown mode %q\n", os.Args[1])
		os.Exit(1)
	}
	if err := out.Flush(); err != nil {
		fail("write: %v", err)
	}
}

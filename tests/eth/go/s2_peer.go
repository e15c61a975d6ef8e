// s2_peer: a third independent Snappy peer for tests/eth/interop_test.py, built on
// github.com/klauspost/compress/s2 (Debian golang-github-klauspost-compress-dev) in its
// Snappy-compatible modes. Reads stdin, writes stdout.
//
//	s2_peer block-encode LEVEL                     s2.EncodeSnappy / EncodeSnappyBetter / EncodeSnappyBest
//	s2_peer block-decode                           s2.Decode (reads Snappy blocks too)
//	s2_peer framed-encode LEVEL BLOCK PAD          s2.NewWriter(WriterSnappyCompat(), ...), Close
//	s2_peer framed-decode                          s2.NewReader
//
// LEVEL is default, better or best; BLOCK is the writer's block size (4096..65536, 0 = the
// writer's default, 64 KiB - 8 in Snappy mode); PAD (0 = none) pads the stream to a multiple of
// PAD bytes with a padding chunk (type 0xfe), as WriterPadding does. Any failure: a message on
// stderr, exit 2. Built offline by the test: GO111MODULE=off GOPATH=/usr/share/gocode go build.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/klauspost/compress/s2"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "s2_peer: "+format+"\n", args...)
	os.Exit(2)
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: s2_peer block-encode LEVEL | block-decode | framed-encode LEVEL BLOCK PAD | framed-decode")
	os.Exit(1)
}

func number(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		usage()
	}
	return n
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	switch os.Args[1] {
	case "block-encode", "block-decode":
		in, err := io.ReadAll(os.Stdin)
		if err != nil {
			fail("read: %v", err)
		}
		var res []byte
		if os.Args[1] == "block-decode" {
			if res, err = s2.Decode(nil, in); err != nil {
				fail("decode: %v", err)
			}
		} else {
			if len(os.Args) != 3 {
				usage()
			}
			switch os.Args[2] {
			case "default":
				res = s2.EncodeSnappy(nil, in)
			case "better":
				res = s2.EncodeSnappyBetter(nil, in)
			case "best":
				res = s2.EncodeSnappyBest(nil, in)
			default:
				usage()
			}
		}
		if _, err = out.Write(res); err != nil {
			fail("write: %v", err)
		}
	case "framed-encode":
		if len(os.Args) != 5 {
			usage()
		}
		opts := []s2.WriterOption{s2.WriterSnappyCompat()}
		switch os.Args[2] {
		case "default":
		case "better":
			opts = append(opts, s2.WriterBetterCompression())
		case "best":
			opts = append(opts, s2.WriterBestCompression())
		default:
			usage()
		}
		if b := number(os.Args[3]); b != 0 {
			opts = append(opts, s2.WriterBlockSize(b))
		}
		if p := number(os.Args[4]); p != 0 {
			opts = append(opts, s2.WriterPadding(p))
		}
		w := s2.NewWriter(out, opts...)
		if _, err := io.Copy(w, os.Stdin); err != nil {
			fail("encode: %v", err)
		}
		if err := w.Close(); err != nil {
			fail("encode: %v", err)
		}
	case "framed-decode":
		if _, err := io.Copy(out, s2.NewReader(os.Stdin)); err != nil {
			fail("decode: %v", err)
		}
	default:
		usage()
	}
	if err := out.Flush(); err != nil {
		fail("write: %v", err)
	}
}

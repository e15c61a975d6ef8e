// snappy_peer: an independent Snappy peer for tests/eth/interop_test.py and the baseline of
// bench/eth_bench.c, built on github.com/golang/snappy (Debian golang-github-golang-snappy-dev).
// Reads stdin, writes stdout.
//
//	snappy_peer block-encode | block-decode | framed-encode | framed-decode
//	snappy_peer framed-time REPS MIN_SECONDS
//
// Block modes treat stdin as one block (snappy.Encode / snappy.Decode); framed modes stream
// through snappy.NewBufferedWriter / snappy.NewReader. framed-time (eth_bench) decodes the framed
// stream on stdin with one snappy.Reader (Reset for every pass, as a client reuses it) reading
// into one output buffer with io.ReadFull, then checks EOF: REPS timings, each repeating the
// decode until it lasts MIN_SECONDS; it prints "BYTES FNV64A MEDIAN_MBPS" (decoded bytes, the
// FNV-1a 64 hash of them, the median of the timings in 10^6 bytes per second). Any failure: a
// message on stderr, exit 2. Built offline: GO111MODULE=off GOPATH=/usr/share/gocode go build.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/golang/snappy"
)

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "snappy_peer: "+format+"\n", args...)
	os.Exit(2)
}

// framedTime is the framed-time mode (see the header).
func framedTime(reps int, minSeconds float64) {
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail("read: %v", err)
	}
	br := bytes.NewReader(in)
	r := snappy.NewReader(br)
	want, err := io.ReadAll(r)
	if err != nil {
		fail("decode: %v", err)
	}
	buf := make([]byte, len(want)+1)
	decode := func() {
		br.Reset(in)
		r.Reset(br)
		if _, err := io.ReadFull(r, buf[:len(want)]); err != nil {
			fail("decode: %v", err)
		}
		if n, err := r.Read(buf[len(want):]); n != 0 || err != io.EOF {
			fail("decode: %d bytes past the end (%v)", n, err)
		}
	}
	decode()
	if !bytes.Equal(buf[:len(want)], want) {
		fail("decode: the reused reader decodes other bytes")
	}
	t0 := time.Now()
	decode()
	one := time.Since(t0).Seconds()
	iters := 1
	if one < minSeconds {
		iters = int(minSeconds/one) + 1
	}
	speeds := make([]float64, 0, reps)
	for k := 0; k < reps; k++ {
		t0 = time.Now()
		for i := 0; i < iters; i++ {
			decode()
		}
		dt := time.Since(t0).Seconds() / float64(iters)
		speeds = append(speeds, float64(len(want))/dt/1e6)
	}
	sort.Float64s(speeds)
	med := speeds[reps/2]
	if reps%2 == 0 {
		med = (speeds[reps/2-1] + speeds[reps/2]) / 2
	}
	h := fnv.New64a()
	h.Write(want)
	fmt.Printf("%d %016x %.1f\n", len(want), h.Sum64(), med)
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "framed-time" {
		reps, err1 := strconv.Atoi(os.Args[2])
		minSeconds, err2 := strconv.ParseFloat(os.Args[3], 64)
		if err1 != nil || err2 != nil || reps < 1 || minSeconds <= 0 {
			fail("framed-time REPS MIN_SECONDS")
		}
		framedTime(reps, minSeconds)
		return
	}
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: snappy_peer block-encode|block-decode|framed-encode|framed-decode | framed-time REPS MIN_SECONDS")
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

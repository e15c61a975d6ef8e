#!/usr/bin/env bash
# `wirekit iltp nonce` and `wirekit iltp address` (Lace-060): output lines, exit statuses and error
# lines. The nonce is checked against b3sum (the BLAKE3 team's tool) when it is installed, with
# `wirekit b64a encode` turning its raw output into B64A.
# Usage: session_cli_test.sh PATH/TO/wirekit
set -u

wirekit=${1:?usage: session_cli_test.sh PATH/TO/wirekit}
if [ ! -x "$wirekit" ]; then
    echo "not executable: $wirekit" >&2
    exit 1
fi

. "$(dirname "$0")/../cli_lib.sh"

# run ARGS...: runs wirekit, leaving stdout in $out, stderr in $err, the status in $st
run() {
    "$wirekit" "$@" >"$tmp/out" 2>"$tmp/err"
    st=$?
    out=$(cat "$tmp/out")
    err=$(cat "$tmp/err")
}

# expect NAME STATUS EXPECTED_STDOUT ARGS...
expect() {
    local name=$1 want_st=$2 want_out=$3
    shift 3
    run "$@"
    if [ "$st" -eq "$want_st" ] && [ "$out" = "$want_out" ]; then ok; else
        bad "$name: exit $st (want $want_st), stdout '$out' (want '$want_out'), stderr '$err'"
    fi
}

# expect_err NAME STATUS STDERR_PREFIX ARGS...: a failure with one stderr line and no stdout
expect_err() {
    local name=$1 want_st=$2 prefix=$3
    shift 3
    run "$@"
    local lines
    lines=$(printf '%s\n' "$err" | wc -l)
    if [ "$st" -eq "$want_st" ] && [ -z "$out" ] && [ "$lines" -eq 1 ] && [[ "$err" == "$prefix"* ]]; then
        ok
    else
        bad "$name: exit $st (want $want_st), stderr '$err' (want prefix '$prefix'), stdout '$out'"
    fi
}

seed=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
seed2=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff
max=18446744073709551615

# ---- wirekit iltp nonce ------------------------------------------------------------------------

# Pinned values (b3sum 1.2.0 on the 39-byte input, B64A-encoded).
run iltp nonce --seed "$seed"
n0=$out
[ "$st" -eq 0 ] && [ ${#n0} -eq 43 ] && [[ "$n0" =~ ^[0-9A-Za-z_~]+$ ]] && ok || bad "nonce: '$n0' exit $st"
expect "nonce sequence 0 pinned" 0 "f8wwNh5y7zNrHCjRqMtvYXcbqyoKIZvCJpWI0hYPAr8" iltp nonce --seed "$seed"
expect "nonce --sequence 0 is the default" 0 "$n0" iltp nonce --seed "$seed" --sequence 0
expect "nonce upper-case hex seed" 0 "$n0" iltp nonce --seed "${seed^^}"
run iltp nonce --seed "$seed" --sequence 1
n1=$out
expect "nonce sequence 1 pinned" 0 "cpfgCKAbSjDrOYAcrlIJk8IcERUq0whAusCDkZbSFH4" iltp nonce --seed "$seed" --sequence 1
[ "$n0" != "$n1" ] && ok || bad "sequences 0 and 1 give the same nonce"
expect "nonce --json" 0 "{\"nonce\":\"$n1\",\"sequence\":\"1\"}" iltp nonce --seed "$seed" --sequence 1 --json

# Against b3sum for a few sequences (big-endian u64 after the context and a NUL).
if command -v b3sum >/dev/null 2>&1; then
    printf '%s' "$seed" | sed 's/../\\x&/g' | xargs -0 printf '%b' >"$tmp/key"
    for seq in 0 1 255 256 4294967296 18446744073709551614 $max; do
        hex=$(printf '%016x' "$seq" 2>/dev/null)
        [ "$seq" = "$max" ] && hex=ffffffffffffffff
        [ "$seq" = 18446744073709551614 ] && hex=fffffffffffffffe
        { printf 'lace-iltp/1.0/session-nonce/v1\0'; printf '%s' "$hex" | sed 's/../\\x&/g' | xargs -0 printf '%b'; } >"$tmp/in"
        size=$(wc -c <"$tmp/in")
        want=$(b3sum --keyed --raw "$tmp/in" <"$tmp/key" | "$wirekit" b64a encode)
        run iltp nonce --seed "$seed" --sequence "$seq"
        if [ "$size" -eq 39 ] && [ "$st" -eq 0 ] && [ -n "$want" ] && [ "$out" = "$want" ]; then ok; else
            bad "nonce sequence $seq: '$out' (exit $st), b3sum gives '$want' (input $size bytes)"
        fi
    done
else
    echo "note: b3sum not found; the nonce is checked against pinned values only" >&2
fi

# The peer's nonce is skipped: sequence 0 equal to the peer gives sequence 1's nonce.
expect "nonce --peer skips" 0 "{\"nonce\":\"$n1\",\"sequence\":\"1\"}" iltp nonce --seed "$seed" --peer "$n0" --json
expect "nonce --peer not matching" 0 "$n0" iltp nonce --seed "$seed" --peer "$n1"
run iltp nonce --seed "$seed2"
other=$out
[ "$st" -eq 0 ] && [ "$other" != "$n0" ] && ok || bad "another seed gives '$other' (exit $st)"

# UINT64_MAX is usable once; if it equals the peer nonce the sequence is exhausted (exit 1).
run iltp nonce --seed "$seed" --sequence $max --json
nmax=${out#*\"nonce\":\"}
nmax=${nmax%%\"*}
[ "$st" -eq 0 ] && [ "$out" = "{\"nonce\":\"$nmax\",\"sequence\":\"$max\"}" ] && ok || bad "sequence max: '$out' exit $st"
expect_err "nonce exhausted" 1 "ILTP_ERR_NONCE_EXHAUSTED" iltp nonce --seed "$seed" --sequence $max --peer "$nmax"

# Usage errors exit 1.
expect_err "nonce no seed" 1 "WK_ERR_USAGE" iltp nonce
expect_err "nonce short seed" 1 "WK_ERR_USAGE" iltp nonce --seed 0001
expect_err "nonce bad hex" 1 "WK_ERR_USAGE" iltp nonce --seed "${seed:0:62}zz"
expect_err "nonce long seed" 1 "WK_ERR_USAGE" iltp nonce --seed "${seed}00"
expect_err "nonce zero seed" 1 "WK_ERR_USAGE" iltp nonce --seed "$(printf '0%.0s' {1..64})"
expect_err "nonce seed without value" 1 "WK_ERR_USAGE" iltp nonce --seed
expect_err "nonce sequence too big" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --sequence 18446744073709551616
expect_err "nonce sequence negative" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --sequence -1
expect_err "nonce sequence not a number" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --sequence 1x
expect_err "nonce bad peer" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --peer abc
expect_err "nonce peer with bad tail bits" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --peer "${n0:0:42}~"
expect_err "nonce zero peer" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --peer "$(printf '0%.0s' {1..43})"
expect_err "nonce unknown option" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --bogus
expect_err "nonce seed twice" 1 "WK_ERR_USAGE" iltp nonce --seed "$seed" --seed "$seed"
run iltp nonce --help
[ "$st" -eq 0 ] && [[ "$out" == "usage: wirekit iltp nonce"* ]] && ok || bad "nonce --help: exit $st"

# ---- wirekit iltp address ----------------------------------------------------------------------

# expect_addr ADDRESS "scheme=... host=... port=... path=..." CANONICAL
expect_addr() {
    expect "address $1" 0 "$2"$'\n'"canonical=$3" iltp address "$1"
}
expect_addr stdio "scheme=stdio host=- port=- path=-" stdio
expect_addr unix:/tmp/lace.sock "scheme=unix host=- port=- path=/tmp/lace.sock" unix:/tmp/lace.sock
expect_addr tcp:127.0.0.1:4790 "scheme=tcp host=127.0.0.1 port=4790 path=-" tcp:127.0.0.1
expect_addr "tcp:[::1]:4790" "scheme=tcp host=::1 port=4790 path=-" "tcp:[::1]"
expect_addr quib:example.com "scheme=quib host=example.com port=4790 path=-" quib:example.com
expect_addr ws:127.0.0.1:4790/interlace "scheme=ws host=127.0.0.1 port=4790 path=/interlace" ws:127.0.0.1:4790
expect_addr wss:example.com/interlace "scheme=wss host=example.com port=443 path=/interlace" wss:example.com
expect_addr ws:example.com "scheme=ws host=example.com port=80 path=/interlace" ws:example.com
expect_addr tcp:localhost:0 "scheme=tcp host=localhost port=0 path=-" tcp:localhost:0
expect_addr "wss:[2001:DB8::1]:8443/lace" "scheme=wss host=2001:db8::1 port=8443 path=/lace" "wss:[2001:db8::1]:8443/lace"

expect "address --json tcp" 0 \
    '{"scheme":"tcp","host":"::1","port":4790,"path":"","canonical":"tcp:[::1]"}' \
    iltp address --json "tcp:[::1]:4790"
expect "address --json wss" 0 \
    '{"scheme":"wss","host":"example.com","port":443,"path":"/interlace","canonical":"wss:example.com"}' \
    iltp address wss:example.com/interlace --json
expect "address --json stdio" 0 '{"scheme":"stdio","host":"","port":0,"path":"","canonical":"stdio"}' \
    iltp address stdio --json
expect "address --json escapes" 0 \
    '{"scheme":"unix","host":"","port":0,"path":"/tmp/a\"b\\c","canonical":"unix:/tmp/a\"b\\c"}' \
    iltp address 'unix:/tmp/a"b\c' --json

# Invalid addresses: exit 2, one line "ILTP_ERR_ADDRESS at offset N: ...".
expect_err "address URL form" 2 "ILTP_ERR_ADDRESS at offset 3: URL form 'ws://' is not a Lace address" \
    iltp address ws://example.com/interlace
expect_err "address wss URL form" 2 "ILTP_ERR_ADDRESS at offset 4: URL form 'wss://'" iltp address wss://h
expect_err "address unbracketed IPv6" 2 "ILTP_ERR_ADDRESS at offset 4: bracket IPv6 addresses: tcp:[::1]:4790" \
    iltp address tcp:::1
expect_err "address query" 2 "ILTP_ERR_ADDRESS at offset 17: query strings" iltp address "ws:host/interlace?x=1"
expect_err "address fragment" 2 "ILTP_ERR_ADDRESS at offset 9: fragments" iltp address "ws:host/a#b"
expect_err "address unknown scheme" 2 "ILTP_ERR_ADDRESS at offset 0: unknown scheme 'http'" iltp address http:h
expect_err "address missing" 2 "ILTP_ERR_ADDRESS at offset 4: missing address" iltp address tcp:
expect_err "address port range" 2 "ILTP_ERR_ADDRESS at offset 9: port 65536 is out of range" iltp address tcp:host:65536
expect_err "address relative unix" 2 "ILTP_ERR_ADDRESS at offset 5: unix socket path must be absolute" \
    iltp address unix:tmp/x
expect_err "address bad IPv4" 2 "ILTP_ERR_ADDRESS at offset 4: IPv4 part '256'" iltp address tcp:256.1.1.1
expect_err "address tcp path" 2 "ILTP_ERR_ADDRESS at offset 8: tcp addresses take no path" iltp address tcp:host/x
expect_err "address empty" 2 "ILTP_ERR_ADDRESS at offset 0: empty address" iltp address ""
expect_err "address invalid with --json" 2 "ILTP_ERR_ADDRESS at offset 12: IPv6 zone ids" iltp address --json "tcp:[fe80::1%eth0]"

# Usage errors exit 1.
expect_err "address none" 1 "WK_ERR_USAGE" iltp address
expect_err "address two" 1 "WK_ERR_USAGE" iltp address stdio stdio
expect_err "address unknown option" 1 "WK_ERR_USAGE" iltp address --bogus stdio
run iltp address --help
[ "$st" -eq 0 ] && [[ "$out" == "usage: wirekit iltp address"* ]] && ok || bad "address --help: exit $st"

cli_done iltp_session_cli

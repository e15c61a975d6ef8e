#!/usr/bin/env bash
# Compares `wirekit blake3` with b3sum (the BLAKE3 team's tool, Debian package b3sum) on random
# inputs of many sizes: plain hash, keyed hash, derive-key, and extended output (--length).
# Usage: blake3_b3sum.sh PATH/TO/wirekit
set -u

wirekit=${1:?usage: blake3_b3sum.sh PATH/TO/wirekit}
if [ ! -x "$wirekit" ]; then
    echo "not executable: $wirekit" >&2
    exit 1
fi
if ! command -v b3sum >/dev/null 2>&1; then
    echo "b3sum not found (Debian package b3sum): skipped" >&2
    exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

pass=0
fail=0

# check NAME EXPECTED ACTUAL ACTUAL_STATUS
check() {
    if [ "$4" -eq 0 ] && [ -n "$2" ] && [ "$2" = "$3" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $1: expected '$2', wirekit gave '$3' (exit $4)" >&2
    fi
}

random_u32() { od -An -tu4 -N4 /dev/urandom | tr -d ' '; }

sizes=(0 1 2 3 63 64 65 127 128 129 1023 1024 1025 2047 2048 2049 3072 3073 4095 4096 4097
       8192 16383 16384 31744 65535 65536 65537 131072 131073 1048576 $((1048576 + 17))
       $((4194304 + 1)))
for _ in 1 2 3 4 5; do sizes+=($(($(random_u32) % 300000))); done
for _ in 1 2; do sizes+=($(($(random_u32) % 3000))); done

context="wirekit 2024 b3sum comparison context"
lengths=(1 31 33 64 200)

head -c 32 /dev/urandom >"$tmp/key"
keyhex=$(od -An -tx1 -v "$tmp/key" | tr -d ' \n')

for n in "${sizes[@]}"; do
    data="$tmp/data_$n"
    head -c "$n" /dev/urandom >"$data"

    want=$(b3sum --no-names "$data")
    got=$("$wirekit" blake3 <"$data"); st=$?
    check "hash size $n" "$want" "$got" "$st"

    want=$(b3sum --no-names --keyed "$data" <"$tmp/key")
    got=$("$wirekit" blake3 --keyed "$keyhex" <"$data"); st=$?
    check "keyed size $n" "$want" "$got" "$st"

    want=$(b3sum --no-names --derive-key "$context" "$data")
    got=$("$wirekit" blake3 --derive-key "$context" <"$data"); st=$?
    check "derive-key size $n" "$want" "$got" "$st"

    for l in "${lengths[@]}"; do
        want=$(b3sum --no-names --length "$l" "$data")
        got=$("$wirekit" blake3 --length "$l" <"$data"); st=$?
        check "hash size $n length $l" "$want" "$got" "$st"

        want=$(b3sum --no-names --keyed --length "$l" "$data" <"$tmp/key")
        got=$("$wirekit" blake3 --keyed "$keyhex" --length "$l" <"$data"); st=$?
        check "keyed size $n length $l" "$want" "$got" "$st"

        want=$(b3sum --no-names --derive-key "$context" --length "$l" "$data")
        got=$("$wirekit" blake3 --derive-key "$context" --length "$l" <"$data"); st=$?
        check "derive-key size $n length $l" "$want" "$got" "$st"
    done
    rm -f "$data"
done

# A long extended output, and input arriving through a pipe in uneven writes.
head -c 100003 /dev/urandom >"$tmp/pipe"
want=$(b3sum --no-names --length 4099 "$tmp/pipe")
got=$({ head -c 7 "$tmp/pipe"; sleep 0.1; tail -c +8 "$tmp/pipe"; } |
      "$wirekit" blake3 --length 4099); st=$?
check "piped input, length 4099" "$want" "$got" "$st"

# Usage errors exit 1.
"$wirekit" blake3 --keyed 00 </dev/null >/dev/null 2>&1; st=$?
check "short key is a usage error" 1 "$st" 0
"$wirekit" blake3 --keyed "$keyhex" --derive-key x </dev/null >/dev/null 2>&1; st=$?
check "--keyed with --derive-key is a usage error" 1 "$st" 0

echo "blake3 vs b3sum ($(b3sum --version)), ${#sizes[@]} sizes: $pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]

#!/usr/bin/env bash
# CLI contract of `wirekit iltp put / ls / get` (the host Blob store): round trips of random files,
# sorted listing, hashes equal to the glyph line of `wirekit iltp blob`, idempotent put, refusals
# (unknown hash, malformed hash, --expect mismatch, corrupted file) and their exit codes.
set -u
W=$1
. "$(dirname "$0")/../cli_lib.sh"
S="$tmp/store"
N0='svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO' # the empty Blob
# the hash on the glyph line "🖧: B.<hash>.H3" of `wirekit iltp blob`
blob_hash() { "$W" iltp blob < "$1" | head -c 55 | sed -n 's/.*B\.\(.*\)\.H3$/\1/p'; }

for c in put ls get; do
  "$W" iltp "$c" --help > "$tmp/help"; expect_rc $? 0 "$c --help"
  grep -q "^usage: wirekit iltp $c" "$tmp/help" && ok || bad "$c --help text"
done
"$W" iltp put < /dev/null 2> /dev/null; expect_rc $? 1 "put without --store"
"$W" iltp ls --store "$tmp/none" > /dev/null 2> "$tmp/err"; expect_rc $? 1 "ls of a missing store"
grep -q '^HOST_ERR_IO: ' "$tmp/err" && ok || bad "ls of a missing store: $(cat "$tmp/err")"

# round trips: empty, 1 byte, assorted sizes, 1 MiB + 1
sizes="0 1 2 63 64 1023 1024 1025 65536 65537 1048577"
: > "$tmp/want"
i=0
for n in $sizes; do
  f="$tmp/f$i"
  head -c "$n" /dev/urandom > "$f"
  h=$("$W" iltp put --store "$S" < "$f"); expect_rc $? 0 "put $n bytes"
  [ "${#h}" -eq 43 ] && ok || bad "put $n bytes printed '$h'"
  [ "$h" = "$(blob_hash "$f")" ] && ok || bad "put $n bytes: hash differs from iltp blob"
  "$W" iltp get --store "$S" "$h" > "$tmp/out"; expect_rc $? 0 "get $n bytes"
  cmp -s "$f" "$tmp/out" && ok || bad "get $n bytes: data differs"
  cmp -s "$f" "$S/blobs/$h" && ok || bad "stored file of $n bytes is not the raw data"
  echo "$h" >> "$tmp/want"
  i=$((i + 1))
done
[ "$(sed -n 1p "$tmp/want")" = "$N0" ] && ok || bad "empty Blob hash"

# idempotent: same hash, no new file
n_before=$(ls -A "$S/blobs" | wc -l)
h=$("$W" iltp put --store "$S" < "$tmp/f3"); expect_rc $? 0 "put again"
[ "$h" = "$(sed -n 4p "$tmp/want")" ] && ok || bad "put again: other hash"
[ "$(ls -A "$S/blobs" | wc -l)" -eq "$n_before" ] && ok || bad "put again wrote a file"

# ls: sorted (bytewise), exactly the stored hashes; temporaries and foreign names are not listed
touch "$S/blobs/.tmp-abcdefghijkl" "$S/blobs/README"
"$W" iltp ls --store "$S" > "$tmp/ls"; expect_rc $? 0 "ls"
LC_ALL=C sort -u "$tmp/want" > "$tmp/want.sorted"
cmp -s "$tmp/ls" "$tmp/want.sorted" && ok || bad "ls output: $(head -3 "$tmp/ls")"
LC_ALL=C sort -c "$tmp/ls" 2> /dev/null && ok || bad "ls not sorted"
rm -f "$S/blobs/.tmp-abcdefghijkl" "$S/blobs/README"

# --expect
h1=$(sed -n 2p "$tmp/want")
"$W" iltp put --store "$S" --expect "$h1" < "$tmp/f1" > /dev/null; expect_rc $? 0 "put --expect right hash"
"$W" iltp put --store "$S" --expect "$h1" < "$tmp/f2" > "$tmp/out" 2> "$tmp/err"
expect_rc $? 2 "put --expect wrong hash"
grep -q '^HOST_ERR_HASH_MISMATCH: ' "$tmp/err" && ok || bad "mismatch message: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] && ok || bad "mismatch printed a hash"
"$W" iltp put --store "$S" --expect nothash < "$tmp/f1" 2> /dev/null; expect_rc $? 1 "put --expect malformed"

# get: unknown hash, malformed hashes, missing HASH
unknown='0000000000000000000000000000000000000000000'
"$W" iltp get --store "$S" "$unknown" > "$tmp/out" 2> "$tmp/err"; expect_rc $? 1 "get unknown"
[ "$(wc -l < "$tmp/err")" -eq 1 ] && grep -q '^HOST_ERR_NOT_FOUND: ' "$tmp/err" && ok || bad "get unknown message: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] && ok || bad "get unknown wrote data"
for m in short '000000000000000000000000000000000000000000!' '0000000000000000000000000000000000000000001'; do
  "$W" iltp get --store "$S" "$m" > /dev/null 2> "$tmp/err"; expect_rc $? 1 "get malformed '$m'"
  grep -q '^WK_ERR_USAGE: ' "$tmp/err" && ok || bad "get malformed '$m' message: $(cat "$tmp/err")"
done
"$W" iltp get --store "$S" > /dev/null 2>&1; expect_rc $? 1 "get without HASH"
"$W" iltp get --store "$S" "$h1" "$h1" > /dev/null 2>&1; expect_rc $? 1 "get with two hashes"

# a corrupted file is reported, nothing written to stdout
h5=$(sed -n 6p "$tmp/want")
chmod u+w "$S/blobs/$h5"
# flip every bit of byte 3 (writing a fixed byte left random data unchanged 1 time in 256)
b=$(od -An -tu1 -j3 -N1 "$S/blobs/$h5" | tr -d ' ')
printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$S/blobs/$h5" bs=1 seek=3 conv=notrunc status=none
cmp -s "$S/blobs/$h5" "$tmp/f5" && bad "corruption left the file unchanged" || ok
"$W" iltp get --store "$S" "$h5" > "$tmp/out" 2> "$tmp/err"; expect_rc $? 1 "get corrupted"
grep -q '^HOST_ERR_STORE_CORRUPT: ' "$tmp/err" && ok || bad "corrupted message: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] && ok || bad "get corrupted wrote data"
# put repairs it
"$W" iltp put --store "$S" < "$tmp/f5" > /dev/null; expect_rc $? 0 "put repairs"
"$W" iltp get --store "$S" "$h5" | cmp -s - "$tmp/f5" && ok || bad "get after repair"

# over 32 MiB is refused, nothing stored
n_before=$(ls -A "$S/blobs" | wc -l)
head -c $((32 * 1024 * 1024 + 1)) /dev/zero | "$W" iltp put --store "$S" > /dev/null 2> "$tmp/err"
expect_rc $? 1 "put over 32 MiB"
grep -q '^ILTP_ERR_BLOB_TOO_LARGE: ' "$tmp/err" && ok || bad "over 32 MiB message: $(cat "$tmp/err")"
[ "$(ls -A "$S/blobs" | wc -l)" -eq "$n_before" ] && ok || bad "over 32 MiB left a file"

# a store created in a fresh directory through a pipe
printf 'piped' | "$W" iltp put --store "$tmp/s2" > "$tmp/h"; expect_rc $? 0 "put into a new store"
[ "$("$W" iltp ls --store "$tmp/s2")" = "$(cat "$tmp/h")" ] && ok || bad "new store listing"

cli_done host_store_cli

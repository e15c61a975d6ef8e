#!/usr/bin/env bash
# CLI contract of `wirekit iltp items` and `wirekit iltp blob`: the seed's example session raw and
# under each encoding, one line per item, the EOF verdict and exit codes 0 / 2 / 3.
set -u
W=$1
. "$(dirname "$0")/../cli_lib.sh"
N0='svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO'
pre() { printf '\xf0\x9f\xaa\xa2: iltp/1.0 %s\n' "$N0"; }

# the canonical Blob record: the empty Blob is exactly the dictionary's text
printf '' | "$W" iltp blob > "$tmp/empty"
printf '\xf0\x9f\x96\xa7: B.svyLzSM7ffc91i~XDbkMnuOsdjsw_6GrXpTSckqHlpO.H3\nData-Length: 0\n\n' > "$tmp/empty.want"
cmp -s "$tmp/empty" "$tmp/empty.want" && ok || bad "empty Blob record"
"$W" iltp blob --help > /dev/null; expect_rc $? 0 "blob --help"

# the seed's example session, side0 -> side1 (items after the preface)
{
  printf '\n'
  printf 'module: side0\n' | "$W" iltp blob
  printf 'response data with \xf0\x9f\xaa\xa2: knot-shaped bytes\n\n' | "$W" iltp blob > "$tmp/resp"
  h=$(head -c 55 "$tmp/resp" | sed -n 's/.*B\.\(.*\)\.H3/\1/p')
  printf "Advertised('B.%s.H3')\nAdvertisedField('B.%s.H3','Type','0','B')\n\n" "$h" "$h"
  printf '\n'
  cat "$tmp/resp"
  printf 'RoundComplete()\n\n'
  printf '\n\nRoundComplete()\n\n'
} > "$tmp/items"
want="preface 1.0 nonce=$N0 decode=- encode=-
facts 0
record B
facts 2
facts 0
record B
facts 1
facts 0
facts 0
facts 1"
for enc in identity deflate12c zstd20c; do
  { pre; "$W" iltp encode --encoding "$enc" < "$tmp/items"; } > "$tmp/s.$enc"
  out=$("$W" iltp items --encoding "$enc" < "$tmp/s.$enc")
  rc=$?
  expect_rc $rc 0 "items $enc"
  got=$(printf '%s\n' "$out" | sed -E 's/^(record B) .*/\1/' | grep -v '^end ')
  [ "$got" = "$want" ] && ok || bad "items $enc: $out"
  printf '%s\n' "$out" | tail -n1 | grep -q '^end clean' && ok || bad "items $enc verdict"
  # two sessions back to back (re-prefacing)
  cat "$tmp/s.$enc" "$tmp/s.$enc" | "$W" iltp items --encoding "$enc" --json > "$tmp/j"
  expect_rc $? 0 "two sessions $enc"
  [ "$(grep -c '"item":"preface"' "$tmp/j")" -eq 2 ] && ok || bad "two prefaces $enc"
  # truncation inside the stream
  size=$(stat -c %s "$tmp/s.$enc")
  head -c $((size - 3)) "$tmp/s.$enc" | "$W" iltp items --encoding "$enc" > /dev/null 2> "$tmp/err"
  expect_rc $? 3 "truncated $enc"
  grep -q '^ILTP_ERR_TRUNCATED at offset' "$tmp/err" && ok || bad "truncated $enc message: $(cat "$tmp/err")"
done
# a preface decoded out of a compressed stream
{ pre; { pre; cat "$tmp/items"; } | "$W" iltp encode --encoding zstd20c; } | "$W" iltp items --encoding zstd20c > /dev/null 2> "$tmp/err"
expect_rc $? 2 "encoded preface"
grep -q '^ILTP_ERR_PREFACE_ENCODED' "$tmp/err" && ok || bad "encoded preface message"
# after an end mark only a raw preface
{ cat "$tmp/s.deflate12c"; printf 'Foo()\n\n'; } | "$W" iltp items --encoding deflate12c > /dev/null 2> "$tmp/err"
expect_rc $? 2 "after end mark"
grep -q '^ILTP_ERR_AFTER_END_MARK' "$tmp/err" && ok || bad "after end mark message"
# an item before the first preface; a bad leading byte; a bad hash
printf 'Foo()\n\n' | "$W" iltp items > /dev/null 2> "$tmp/err"; expect_rc $? 2 "premature item"
grep -q '^ILTP_ERR_PREFACE at offset 0' "$tmp/err" && ok || bad "premature item message"
{ pre; printf '#\n'; } | "$W" iltp items > /dev/null 2> "$tmp/err"; expect_rc $? 2 "bad lead"
grep -q '^ILTP_ERR_ITEM_LEAD at offset 59' "$tmp/err" && ok || bad "bad lead message: $(cat "$tmp/err")"
{ pre; sed 's/Data-Length: 14/Data-Length: 13/' "$tmp/items" | head -c 200; } | "$W" iltp items > /dev/null 2> "$tmp/err"
rc=$?; [ $rc -eq 2 ] && ok || bad "bad record: exit $rc"
# EOF inside a fact block with identity
{ pre; printf 'Foo()\n'; } | "$W" iltp items > /dev/null 2> "$tmp/err"; expect_rc $? 3 "EOF in facts"
grep -q 'inside a fact block' "$tmp/err" && ok || bad "EOF in facts message"
"$W" iltp items --encoding nope < /dev/null 2> /dev/null; expect_rc $? 1 "bad encoding"
cli_done iltp_items_cli

#!/usr/bin/env bash
# Installs the build into a temporary prefix and builds a consumer with pkg-config against both
# the shared and the static library: the public headers, wirekit.pc and the install rules; checks
# that no installed binary defines malloc, calloc, realloc or free, and that the man page is
# installed and renders.
set -euo pipefail
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name wirekit.pc | head -n1)
export PKG_CONFIG_PATH=$(dirname "$pc")
test -f "$tmp/prefix/include/wirekit/wirekit.h"
test -x "$tmp/prefix/bin/wirekit"
ls "$tmp/prefix"/lib*/libwirekit.so.0* >/dev/null
passed=0

# The man page: installed as share/man/man1/wirekit.1, and it renders without a warning (groff
# from groff-base, which scripts/bootstrap installs; skipped with a note when it is missing).
man="$tmp/prefix/share/man/man1/wirekit.1"
test -f "$man"
if command -v groff >/dev/null; then
    warnings=$(groff -man -Tutf8 -ww "$man" 2>&1 >/dev/null)
    if [ -n "$warnings" ]; then
        echo "install: groff warns about $man:" >&2
        echo "$warnings" >&2
        exit 1
    fi
    echo "install: share/man/man1/wirekit.1 renders without warnings"
else
    echo "install: share/man/man1/wirekit.1 installed (groff not found: rendering not checked)"
fi
passed=$((passed + 1))

# No installed binary defines the allocator: an executable or library that defines malloc,
# calloc, realloc or free interposes them on every program and library it runs with (the CLI once
# linked a benchmark's counting allocator). Every installed ELF file, dynamic and static symbols.
bins=$(find "$tmp/prefix" -type f \( -perm -u+x -o -name '*.so*' -o -name '*.a' \))
[ -n "$bins" ]
checked=0
for f in $bins; do
    case "$(head -c4 "$f" | od -An -c | tr -d ' ')" in
        *ELF*) ;;
        *) case "$f" in *.a) ;; *) continue ;; esac ;;
    esac
    defs=$( { nm --defined-only "$f" 2>/dev/null; nm -D --defined-only "$f" 2>/dev/null; } |
            awk '$2 ~ /^[TtWwi]$/ && $3 ~ /^(malloc|calloc|realloc|free)(@.*)?$/ {print $3}' | sort -u)
    if [ -n "$defs" ]; then
        echo "install: $f defines $(echo $defs)" >&2
        exit 1
    fi
    checked=$((checked + 1))
done
[ "$checked" -ge 4 ] # wirekit, libwirekit.so, libwirekit.a, libwirekit_host.a
echo "install: no allocator defined in $checked installed binaries"
passed=$((passed + 1))
cat > "$tmp/consumer.c" <<'C'
#include <wirekit/wirekit.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
    uint8_t h[32];
    wk_blake3(wk_iltp_dictionary_get(), WK_ILTP_DICTIONARY_LEN, h);
    char hex[65];
    wk_hex_encode(h, 32, hex);
    printf("%s %s\n", wk_version(), hex);
    return strcmp(hex, "eb56b8cfb9f118671f72c2b391e8a39fa2dfe57bd3af49613047851847e545fd") != 0;
}
C
cc -std=c17 -Wall -Wextra -Werror "$tmp/consumer.c" -o "$tmp/consumer_shared" $(pkg-config --cflags --libs wirekit)
LD_LIBRARY_PATH=$(dirname "$(ls "$tmp/prefix"/lib*/libwirekit.so | head -n1)") "$tmp/consumer_shared"
cc -std=c17 -Wall -Wextra -Werror "$tmp/consumer.c" -o "$tmp/consumer_static" $(pkg-config --cflags wirekit) \
   "$(ls "$tmp/prefix"/lib*/libwirekit.a | head -n1)" $(pkg-config --libs --static wirekit | sed 's/-lwirekit//')
"$tmp/consumer_static"
passed=$((passed + 2))
echo "install: $passed passed, 0 failed"

#!/bin/sh
# eth_no_raw_alloc: no raw malloc/calloc/realloc/free (nor aligned_alloc, posix_memalign, strdup)
# outside the allocator path. Usage: no_raw_alloc.sh NM SRC_DIR OBJECT...
#   - nm -u on every object: none of those symbols may be undefined (called) in it;
#   - a scan of SRC_DIR/*.[ch]: no such call in the source (a member call `a.free(` through a
#     wk_allocator is the allocator path and is allowed).
# Exit 0 when both hold; else prints each finding and exits 1. The ctest eth_no_raw_alloc_probe
# runs it on a probe that calls malloc (WILL_FAIL), so the check is shown to fail when it should.
nm="$1"; src="$2"; shift 2
bad=0
[ "$#" -gt 0 ] || { echo "no objects given"; exit 2; }
for o in "$@"; do
    syms=$("$nm" -u "$o") || { echo "$nm -u $o failed"; exit 2; }
    hits=$(printf '%s\n' "$syms" | awk '{print $NF}' |
           grep -E '^(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup)$')
    if [ -n "$hits" ]; then
        echo "$o calls: $hits"
        bad=1
    fi
done
if grep -nE '(^|[^._>A-Za-z0-9])(malloc|calloc|realloc|free|aligned_alloc|posix_memalign|strdup|strndup)[[:space:]]*\(' \
        "$src"/*.c "$src"/*.h 2>/dev/null; then
    bad=1
fi
[ "$bad" -eq 0 ] && echo "no raw allocation in $src ($# objects)"
exit "$bad"

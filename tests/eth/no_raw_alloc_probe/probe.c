/* eth_no_raw_alloc_probe: a raw malloc that tests/eth/no_raw_alloc.sh must find (WILL_FAIL). */
#include <stdlib.h>

void *wk_eth_no_raw_alloc_probe(size_t n);
void *wk_eth_no_raw_alloc_probe(size_t n)
{
    return malloc(n);
}

/* wirekit eth: crc32c (being written) */
#include <wirekit/eth.h>

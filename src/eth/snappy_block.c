/* wirekit eth: snappy_block (being written) */
#include <wirekit/eth.h>

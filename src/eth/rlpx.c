/* wirekit eth: rlpx (being written) */
#include <wirekit/eth.h>

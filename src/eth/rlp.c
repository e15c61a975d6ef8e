/* wirekit eth: rlp (being written) */
#include <wirekit/eth.h>

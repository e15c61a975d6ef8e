/* wirekit eth: gossip (being written) */
#include <wirekit/eth.h>

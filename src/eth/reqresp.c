/* wirekit eth: reqresp (being written) */
#include <wirekit/eth.h>

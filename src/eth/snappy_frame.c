/* wirekit eth: snappy_frame (being written) */
#include <wirekit/eth.h>

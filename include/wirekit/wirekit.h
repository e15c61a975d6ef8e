/* wirekit umbrella header. */
#ifndef WIREKIT_H
#define WIREKIT_H
#include <wirekit/common.h>
#include <wirekit/iltp.h>
#include <wirekit/eth.h>
#include <wirekit/moqt.h>
#include <wirekit/colloq.h>
#endif

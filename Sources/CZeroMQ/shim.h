#ifndef SHOWROOM_CZEROMQ_SHIM_H
#define SHOWROOM_CZEROMQ_SHIM_H
#include <zmq.h>
#endif

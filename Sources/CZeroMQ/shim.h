#ifndef SHOWROOM_CZEROMQ_SHIM_H
#define SHOWROOM_CZEROMQ_SHIM_H
#include <zmq.h>
#if defined(__linux__)
// The event loop sleeps on its sockets' notification descriptors with epoll.
#include <sys/epoll.h>
#endif
#endif

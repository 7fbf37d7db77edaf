#ifndef SHOWROOM_CZLIB_SHIM_H
#define SHOWROOM_CZLIB_SHIM_H
#include <zlib.h>
#endif

// Only the declaration in include/CFuzzerDriver.h is needed; libFuzzer provides the definition.
#include "CFuzzerDriver.h"

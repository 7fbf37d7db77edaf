#ifndef SHOWROOM_CFUZZERDRIVER_H
#define SHOWROOM_CFUZZERDRIVER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by -sanitize=fuzzer): parses the libFuzzer flags in
/// argv and runs `callback` on every input. Called from a fuzz target's own `main`, because
/// SwiftPM gives every executable a `main` of its own, so libFuzzer's is never linked.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

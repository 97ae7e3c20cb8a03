#ifndef HOMEAPPS_CLIBFUZZER_SHIM_H
#define HOMEAPPS_CLIBFUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

// libFuzzer's entry for programs that keep their own main (LLVM's LibFuzzer docs, "Using libFuzzer as a
// library"). Only referenced when the fuzz target is built with -sanitize=fuzzer -DFUZZING, which links it.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif

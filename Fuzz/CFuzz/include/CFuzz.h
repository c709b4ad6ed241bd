#ifndef ATRIUM_CFUZZ_H
#define ATRIUM_CFUZZ_H
#include <stddef.h>
#include <stdint.h>
/// libFuzzer's driver, for executables that keep their own main (SwiftPM always emits one).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
#endif

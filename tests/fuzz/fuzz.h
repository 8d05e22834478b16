/* fuzz: what every libFuzzer target under tests/fuzz shares.
 *
 * One target per input format, in tests/fuzz/fuzz_NAME.c, defining
 * LLVMFuzzerTestOneInput; `make fuzz` builds each with clang, libFuzzer,
 * AddressSanitizer and UndefinedBehaviorSanitizer (float-cast-overflow
 * included), and `make fuzz-smoke` runs each for a few seconds on its seed
 * corpus (FUZZ_SEEDS_NAME in the Makefile). A parser that only reads files
 * gets the input through fuzz_write. Every target frees what it parsed, so
 * LeakSanitizer checks the error paths too.
 */
#ifndef SCALEPLAN_TESTS_FUZZ_H
#define SCALEPLAN_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* This process's scratch folder (made once, under /dev/shm when there is
 * one); the process's exit leaves it behind only if killed. */
const char *fuzz_dir(void);

/* Write the input as file `name` in the scratch folder; its path (static,
 * valid until the next call). NULL when it cannot be written. */
const char *fuzz_write(const char *name, const uint8_t *data, size_t size);

/* The input as JSON (NULL when it does not parse): the repository's own
 * reader, so its errors are fuzzed too. Caller deletes. */
cJSON *fuzz_json(const uint8_t *data, size_t size);

/* Remove everything under path (the scratch folder's sub-folders). */
void fuzz_clear(const char *path);

#endif

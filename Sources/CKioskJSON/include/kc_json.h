// SPDX-License-Identifier: Apache-2.0
#ifndef KC_JSON_H
#define KC_JSON_H
// jansson with a bound on what one parse may allocate: jansson builds the whole tree in memory
// (an 8 MiB text of `[0,0,...]` is 4 million values, some 160 MiB as json_t), so each parse is
// given a byte budget, counted in the allocator jansson calls (json_set_alloc_funcs(3)); past
// it the allocation fails and json_loadb returns NULL with json_error_out_of_memory.
#include <jansson.h>
#include <stddef.h>

/// Installs the counting allocator (once per process, before any jansson value exists). Every
/// entry point below calls it; call it before creating jansson values yourself.
void kc_json_prepare(void);

/// json_loadb(buffer, length, flags, error) allowing at most `limit` bytes of allocations on
/// this thread during the call (0: no limit). `*exceeded` is set to 1 when an allocation was
/// refused for the limit (the result is then NULL), else 0. The tree returned is the caller's
/// (json_decref), freed through the same allocator.
json_t *kc_json_loadb(const char *buffer, size_t length, size_t flags, size_t limit,
                      json_error_t *error, int *exceeded);
#endif

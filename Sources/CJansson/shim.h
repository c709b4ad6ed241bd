#ifndef ATRIUM_CJANSSON_SHIM_H
#define ATRIUM_CJANSSON_SHIM_H
#include <jansson.h>

/// json_typeof is a macro in jansson.
static inline int atrium_json_typeof(const json_t *j) { return (int)json_typeof(j); }
static inline void atrium_json_decref(json_t *j) { json_decref(j); }

#endif

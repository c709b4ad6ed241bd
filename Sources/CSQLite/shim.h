#ifndef ATRIUM_CSQLITE_SHIM_H
#define ATRIUM_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a cast macro Swift cannot import: it tells SQLite to copy the bound bytes.
static inline int atrium_sqlite3_bind_text_transient(sqlite3_stmt *s, int i, const char *t, int n) {
    return sqlite3_bind_text(s, i, t, n, SQLITE_TRANSIENT);
}

#endif

#include "CAtriumSupport.h"

#include <malloc.h>
#include <stdlib.h>

int atrium_keep_large_blocks_returnable(void) {
    if (getenv("MALLOC_MMAP_THRESHOLD_") != NULL) return 0;
    return mallopt(M_MMAP_THRESHOLD, 64 * 1024);
}

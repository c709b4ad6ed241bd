#ifndef ATRIUM_COPUS_SHIM_H
#define ATRIUM_COPUS_SHIM_H
#include <opus/opus.h>

/// OPUS_SET_BITRATE through the variadic control.
static inline int atrium_opus_set_bitrate(OpusEncoder *e, int bitsPerSecond) {
    return opus_encoder_ctl(e, OPUS_SET_BITRATE(bitsPerSecond));
}
#endif

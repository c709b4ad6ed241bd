#ifndef ATRIUM_CVPX_SHIM_H
#define ATRIUM_CVPX_SHIM_H
#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

/// vpx_codec_enc_init and vpx_codec_dec_init are macros over the _ver functions.
static inline vpx_codec_err_t atrium_vpx_enc_init(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg) {
    return vpx_codec_enc_init(ctx, vpx_codec_vp8_cx(), cfg, 0);
}
static inline vpx_codec_err_t atrium_vpx_dec_init(vpx_codec_ctx_t *ctx) {
    return vpx_codec_dec_init(ctx, vpx_codec_vp8_dx(), NULL, 0);
}
/// VP8E_SET_CPUUSED through the variadic control.
static inline vpx_codec_err_t atrium_vpx_set_cpu_used(vpx_codec_ctx_t *ctx, int value) {
    return vpx_codec_control(ctx, VP8E_SET_CPUUSED, value);
}
static inline const vpx_codec_cx_pkt_t *atrium_vpx_next_packet(vpx_codec_ctx_t *ctx, vpx_codec_iter_t *iter) {
    return vpx_codec_get_cx_data(ctx, iter);
}
static inline int atrium_vpx_packet_is_frame(const vpx_codec_cx_pkt_t *p) { return p->kind == VPX_CODEC_CX_FRAME_PKT; }
static inline const void *atrium_vpx_packet_data(const vpx_codec_cx_pkt_t *p) { return p->data.frame.buf; }
static inline size_t atrium_vpx_packet_size(const vpx_codec_cx_pkt_t *p) { return p->data.frame.sz; }
static inline int atrium_vpx_packet_is_key(const vpx_codec_cx_pkt_t *p) { return (p->data.frame.flags & VPX_FRAME_IS_KEY) != 0; }
static inline long atrium_vpx_force_key(void) { return VPX_EFLAG_FORCE_KF; }
static inline unsigned long atrium_vpx_realtime(void) { return VPX_DL_REALTIME; }
#endif

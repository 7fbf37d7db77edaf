// Umbrella header for the CVPX system-library module.
//
// libvpx's init entry points are macros that append the ABI version
// (vpx_codec_enc_init -> vpx_codec_enc_init_ver(..., VPX_ENCODER_ABI_VERSION)),
// and controls go through the variadic vpx_codec_control_(). Swift can import
// neither, so the Swift layer calls the typed `static inline` wrappers below.
// Flag macros built from expressions are re-exported as typed constants.
#ifndef SHOWROOM_CVPX_SHIM_H
#define SHOWROOM_CVPX_SHIM_H

#include <vpx/vpx_encoder.h>
#include <vpx/vpx_decoder.h>
#include <vpx/vp8cx.h>
#include <vpx/vp8dx.h>

// MARK: Initialisation (macros that bake in the ABI version of these headers)

static inline vpx_codec_err_t showroom_vpx_enc_init(vpx_codec_ctx_t *ctx,
                                                    vpx_codec_iface_t *iface,
                                                    const vpx_codec_enc_cfg_t *cfg,
                                                    vpx_codec_flags_t flags) {
    return vpx_codec_enc_init(ctx, iface, cfg, flags);
}

static inline vpx_codec_err_t showroom_vpx_dec_init(vpx_codec_ctx_t *ctx,
                                                    vpx_codec_iface_t *iface,
                                                    const vpx_codec_dec_cfg_t *cfg,
                                                    vpx_codec_flags_t flags) {
    return vpx_codec_dec_init(ctx, iface, cfg, flags);
}

// MARK: Encoder controls (VP8E_* apply to VP8 and VP9; VP9E_* to VP9 only)

/// VP8: -16...16 (negative = realtime speed). VP9: -9...9.
static inline vpx_codec_err_t showroom_vp8_set_cpuused(vpx_codec_ctx_t *ctx, int cpuUsed) {
    return vpx_codec_control(ctx, VP8E_SET_CPUUSED, cpuUsed);
}

static inline vpx_codec_err_t showroom_vp8_set_static_threshold(vpx_codec_ctx_t *ctx, unsigned int threshold) {
    return vpx_codec_control(ctx, VP8E_SET_STATIC_THRESHOLD, threshold);
}

static inline vpx_codec_err_t showroom_vp8_set_noise_sensitivity(vpx_codec_ctx_t *ctx, unsigned int level) {
    return vpx_codec_control(ctx, VP8E_SET_NOISE_SENSITIVITY, level);
}

/// Caps a keyframe's size to `percent` of the per-frame target bitrate.
static inline vpx_codec_err_t showroom_vp8_set_max_intra_bitrate_pct(vpx_codec_ctx_t *ctx, unsigned int percent) {
    return vpx_codec_control(ctx, VP8E_SET_MAX_INTRA_BITRATE_PCT, percent);
}

/// 0 off, 1 variance, 2 complexity, 3 cyclic refresh (the usual realtime choice).
static inline vpx_codec_err_t showroom_vp9_set_aq_mode(vpx_codec_ctx_t *ctx, unsigned int mode) {
    return vpx_codec_control(ctx, VP9E_SET_AQ_MODE, mode);
}

static inline vpx_codec_err_t showroom_vp9_set_row_mt(vpx_codec_ctx_t *ctx, unsigned int enabled) {
    return vpx_codec_control(ctx, VP9E_SET_ROW_MT, enabled);
}

/// log2 of the number of tile columns.
static inline vpx_codec_err_t showroom_vp9_set_tile_columns(vpx_codec_ctx_t *ctx, int log2Columns) {
    return vpx_codec_control(ctx, VP9E_SET_TILE_COLUMNS, log2Columns);
}

// MARK: Flags re-exported as typed constants

static const unsigned long SHOWROOM_VPX_DL_REALTIME = VPX_DL_REALTIME;
static const vpx_enc_frame_flags_t SHOWROOM_VPX_EFLAG_FORCE_KF = VPX_EFLAG_FORCE_KF;
static const vpx_codec_frame_flags_t SHOWROOM_VPX_FRAME_IS_KEY = VPX_FRAME_IS_KEY;
static const vpx_codec_er_flags_t SHOWROOM_VPX_ERROR_RESILIENT_DEFAULT = VPX_ERROR_RESILIENT_DEFAULT;

#endif /* SHOWROOM_CVPX_SHIM_H */

// Umbrella header for the COpus system-library module.
//
// `opus_encoder_ctl` / `opus_decoder_ctl` are variadic and their request macros
// (OPUS_SET_BITRATE(x) expands to "4002, checked(x)") cannot be imported by Swift,
// so each control the Swift layer needs gets a typed `static inline` wrapper here.
#ifndef SHOWROOM_COPUS_SHIM_H
#define SHOWROOM_COPUS_SHIM_H

// pkg-config puts <prefix>/include/opus on the include path (Debian and Homebrew alike).
#include <opus.h>

// MARK: Encoder controls

static inline int showroom_opus_set_bitrate(OpusEncoder *enc, opus_int32 bitsPerSecond) {
    return opus_encoder_ctl(enc, OPUS_SET_BITRATE(bitsPerSecond));
}

static inline int showroom_opus_get_bitrate(OpusEncoder *enc, opus_int32 *bitsPerSecond) {
    return opus_encoder_ctl(enc, OPUS_GET_BITRATE(bitsPerSecond));
}

/// application: OPUS_APPLICATION_VOIP, _AUDIO or _RESTRICTED_LOWDELAY.
static inline int showroom_opus_set_application(OpusEncoder *enc, opus_int32 application) {
    return opus_encoder_ctl(enc, OPUS_SET_APPLICATION(application));
}

/// complexity: 0 (fastest) ... 10 (best).
static inline int showroom_opus_set_complexity(OpusEncoder *enc, opus_int32 complexity) {
    return opus_encoder_ctl(enc, OPUS_SET_COMPLEXITY(complexity));
}

static inline int showroom_opus_set_inband_fec(OpusEncoder *enc, opus_int32 enabled) {
    return opus_encoder_ctl(enc, OPUS_SET_INBAND_FEC(enabled));
}

static inline int showroom_opus_set_packet_loss_perc(OpusEncoder *enc, opus_int32 percent) {
    return opus_encoder_ctl(enc, OPUS_SET_PACKET_LOSS_PERC(percent));
}

static inline int showroom_opus_set_dtx(OpusEncoder *enc, opus_int32 enabled) {
    return opus_encoder_ctl(enc, OPUS_SET_DTX(enabled));
}

static inline int showroom_opus_encoder_reset(OpusEncoder *enc) {
    return opus_encoder_ctl(enc, OPUS_RESET_STATE);
}

// MARK: Decoder controls

static inline int showroom_opus_decoder_reset(OpusDecoder *dec) {
    return opus_decoder_ctl(dec, OPUS_RESET_STATE);
}

#endif /* SHOWROOM_COPUS_SHIM_H */

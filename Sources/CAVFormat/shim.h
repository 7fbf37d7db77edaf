// Umbrella header for the CAVFormat system-library module: FFmpeg's muxers (libavformat) with
// the codec parameters (libavcodec) and utilities (libavutil) they take.
//
// AVERROR() and the error tags are expression macros Swift cannot import, so the few the Swift
// layer needs are re-exported as typed functions and constants.
#ifndef SHOWROOM_CAVFORMAT_SHIM_H
#define SHOWROOM_CAVFORMAT_SHIM_H

#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

/// libav's error number for a POSIX errno (AVERROR(e) is a macro).
static inline int showroom_averror(int posixError) {
    return AVERROR(posixError);
}

/// The POSIX errno inside a libav error, or 0 when it is one of libav's own tags.
static inline int showroom_averror_errno(int error) {
    return (error < 0 && error > -4096) ? -error : 0;
}

#endif /* SHOWROOM_CAVFORMAT_SHIM_H */

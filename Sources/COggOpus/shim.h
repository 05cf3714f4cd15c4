#pragma once
#include <opusfile.h>
#include <opusenc.h>

// ope_encoder_ctl is variadic: wrap the requests we use.
static inline int cogg_set_bitrate(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_BITRATE(v)); }
static inline int cogg_set_complexity(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_COMPLEXITY(v)); }
static inline int cogg_set_signal(OggOpusEnc *e, opus_int32 v) { return ope_encoder_ctl(e, OPUS_SET_SIGNAL(v)); }

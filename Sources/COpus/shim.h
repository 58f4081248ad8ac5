// libopus for Swift. opus_encoder_ctl/opus_decoder_ctl are variadic macros,
// so each request we use gets a typed static inline wrapper here.
#ifndef BEDRUD_COPUS_SHIM_H
#define BEDRUD_COPUS_SHIM_H
#include <opus.h>

static inline int shim_opus_encoder_set_bitrate(OpusEncoder *e, opus_int32 bps) { return opus_encoder_ctl(e, OPUS_SET_BITRATE(bps)); }
static inline int shim_opus_encoder_set_complexity(OpusEncoder *e, opus_int32 c) { return opus_encoder_ctl(e, OPUS_SET_COMPLEXITY(c)); }
static inline int shim_opus_encoder_set_signal_voice(OpusEncoder *e) { return opus_encoder_ctl(e, OPUS_SET_SIGNAL(OPUS_SIGNAL_VOICE)); }
static inline int shim_opus_encoder_set_inband_fec(OpusEncoder *e, opus_int32 on) { return opus_encoder_ctl(e, OPUS_SET_INBAND_FEC(on)); }
static inline int shim_opus_encoder_set_packet_loss_perc(OpusEncoder *e, opus_int32 p) { return opus_encoder_ctl(e, OPUS_SET_PACKET_LOSS_PERC(p)); }
static inline int shim_opus_encoder_set_dtx(OpusEncoder *e, opus_int32 on) { return opus_encoder_ctl(e, OPUS_SET_DTX(on)); }
static inline int shim_opus_encoder_set_vbr(OpusEncoder *e, opus_int32 on) { return opus_encoder_ctl(e, OPUS_SET_VBR(on)); }
static inline int shim_opus_encoder_get_lookahead(OpusEncoder *e, opus_int32 *out) { return opus_encoder_ctl(e, OPUS_GET_LOOKAHEAD(out)); }
static inline int shim_opus_encoder_reset(OpusEncoder *e) { return opus_encoder_ctl(e, OPUS_RESET_STATE); }
static inline int shim_opus_encoder_set_prediction_disabled(OpusEncoder *e, opus_int32 on) { return opus_encoder_ctl(e, OPUS_SET_PREDICTION_DISABLED(on)); }
static inline int shim_opus_decoder_reset(OpusDecoder *d) { return opus_decoder_ctl(d, OPUS_RESET_STATE); }
static inline int shim_opus_decoder_get_last_packet_duration(OpusDecoder *d, opus_int32 *out) { return opus_decoder_ctl(d, OPUS_GET_LAST_PACKET_DURATION(out)); }
static inline int shim_opus_decoder_set_gain(OpusDecoder *d, opus_int32 q8dB) { return opus_decoder_ctl(d, OPUS_SET_GAIN(q8dB)); }

#endif

import COpus
import COgg
func _probeMedia() -> [Any] { [opus_decoder_create, ogg_stream_init, shim_opus_encoder_set_bitrate] }

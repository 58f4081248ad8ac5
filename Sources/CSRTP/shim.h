// libsrtp2 for Swift. srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80 is a macro;
// srtp_crypto_policy_set_rtp_default means the same and is a real function.
#ifndef BEDRUD_CSRTP_SHIM_H
#define BEDRUD_CSRTP_SHIM_H
#include <string.h>
#include <srtp2/srtp.h>

/// Room srtp_protect needs after an RTP packet (tag + MKI); SRTCP needs 4 more for its index.
static const int shim_SRTP_MAX_TRAILER_LEN = SRTP_MAX_TRAILER_LEN;

/// Fills `p` for one direction of a DTLS-SRTP session (RFC 5764).
/// `gcm` selects AEAD_AES_128_GCM (RFC 7714), otherwise AES_CM_128_HMAC_SHA1_80.
/// `inbound` selects ssrc_any_inbound (streams are cloned per SSRC on first packet),
/// otherwise ssrc_any_outbound. `key` is master key || master salt and must stay valid
/// until srtp_create returns (libsrtp copies it).
static inline void shim_srtp_policy_init(srtp_policy_t *p, int gcm, int inbound, unsigned char *key, unsigned long window) {
    memset(p, 0, sizeof(*p));
    if (gcm) {
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&p->rtp);
        srtp_crypto_policy_set_aes_gcm_128_16_auth(&p->rtcp);
    } else {
        srtp_crypto_policy_set_rtp_default(&p->rtp);
        srtp_crypto_policy_set_rtcp_default(&p->rtcp);
    }
    p->ssrc.type = inbound ? ssrc_any_inbound : ssrc_any_outbound;
    p->ssrc.value = 0;
    p->key = key;
    p->window_size = window;
    p->allow_repeat_tx = inbound ? 0 : 1;
    p->next = NULL;
}
#endif

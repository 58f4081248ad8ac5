// libsrtp2 for Swift. srtp_crypto_policy_set_aes_cm_128_hmac_sha1_80 is a macro;
// srtp_crypto_policy_set_rtp_default means the same and is a real function.
#ifndef BEDRUD_CSRTP_SHIM_H
#define BEDRUD_CSRTP_SHIM_H
#include <srtp2/srtp.h>
#endif

// usrsctp for Swift. The library is built with INET and INET6; its header needs them defined.
#ifndef BEDRUD_CUSRSCTP_SHIM_H
#define BEDRUD_CUSRSCTP_SHIM_H
#ifndef INET
#define INET 1
#endif
#ifndef INET6
#define INET6 1
#endif
#include <string.h>
#include <usrsctp.h>

// Notification readers: usrsctp hands notifications up as raw bytes whose layout is a
// C union. These check the length before reading so a short buffer yields -1, never
// an out-of-bounds read.

/// sn_type of a notification, or -1 if `len` is too short.
static inline int shim_sctp_notification_type(const void *data, size_t len) {
    if (len < sizeof(struct sctp_tlv)) return -1;
    return ((const struct sctp_tlv *)data)->sn_type;
}
/// sac_state of an SCTP_ASSOC_CHANGE notification, or -1.
static inline int shim_sctp_assoc_change_state(const void *data, size_t len) {
    if (len < sizeof(struct sctp_assoc_change)) return -1;
    return ((const struct sctp_assoc_change *)data)->sac_state;
}
/// strreset_flags of an SCTP_STREAM_RESET_EVENT, or -1.
static inline int shim_sctp_stream_reset_flags(const void *data, size_t len) {
    if (len < sizeof(struct sctp_stream_reset_event)) return -1;
    return ((const struct sctp_stream_reset_event *)data)->strreset_flags;
}
/// Number of stream ids in an SCTP_STREAM_RESET_EVENT (bounded by `len`), or 0.
static inline size_t shim_sctp_stream_reset_count(const void *data, size_t len) {
    if (len < sizeof(struct sctp_stream_reset_event)) return 0;
    const struct sctp_stream_reset_event *e = (const struct sctp_stream_reset_event *)data;
    size_t declared = e->strreset_length;
    if (declared > len) declared = len;
    if (declared < sizeof(struct sctp_stream_reset_event)) return 0;
    return (declared - sizeof(struct sctp_stream_reset_event)) / sizeof(uint16_t);
}
/// The i-th stream id of an SCTP_STREAM_RESET_EVENT; call only with i < shim_sctp_stream_reset_count.
static inline uint16_t shim_sctp_stream_reset_stream(const void *data, size_t i) {
    return ((const struct sctp_stream_reset_event *)data)->strreset_stream_list[i];
}
/// Asks the peer to reset (close) one outgoing stream (RFC 6525), which closes a data channel (RFC 8831 §6.7).
static inline int shim_sctp_reset_stream(struct socket *sock, uint16_t stream) {
    size_t len = sizeof(struct sctp_reset_streams) + sizeof(uint16_t);
    unsigned char buf[sizeof(struct sctp_reset_streams) + sizeof(uint16_t)];
    memset(buf, 0, sizeof(buf));
    struct sctp_reset_streams *r = (struct sctp_reset_streams *)buf;
    r->srs_assoc_id = SCTP_ALL_ASSOC;
    r->srs_flags = SCTP_STREAM_RESET_OUTGOING;
    r->srs_number_streams = 1;
    r->srs_stream_list[0] = stream;
    return usrsctp_setsockopt(sock, IPPROTO_SCTP, SCTP_RESET_STREAMS, r, (socklen_t)len);
}
#endif

// GNU libmicrohttpd (Debian's libmicrohttpd-dev) for Swift: serve's listening side.
// Swift cannot call C's variadic functions, so the daemon's start and its info queries
// get fixed-argument wrappers here.
#ifndef BEDRUD_CMICROHTTPD_SHIM_H
#define BEDRUD_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <microhttpd.h>

/// Starts a daemon with one internal epoll thread on `addr` (IPv4 or IPv6) and the
/// limits that make an open port safe: connections in all and per address, an idle
/// timeout in seconds, and the memory each connection may use for its request line and
/// headers (a request that needs more is answered by the library itself).
static inline struct MHD_Daemon *shim_MHD_start(const struct sockaddr *addr, int ipv6, unsigned int connectionLimit,
                                                unsigned int perAddressLimit, unsigned int idleTimeoutSeconds, size_t memoryLimit,
                                                MHD_AccessHandlerCallback handler, void *handlerContext,
                                                MHD_RequestCompletedCallback completed) {
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC;
    if (ipv6) flags |= MHD_USE_IPv6;
    uint16_t port = 0;
    if (addr->sa_family == AF_INET) port = ntohs(((const struct sockaddr_in *)addr)->sin_port);
    if (addr->sa_family == AF_INET6) port = ntohs(((const struct sockaddr_in6 *)addr)->sin6_port);
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handlerContext,
                            MHD_OPTION_SOCK_ADDR, addr,
                            MHD_OPTION_CONNECTION_LIMIT, connectionLimit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, perAddressLimit,
                            MHD_OPTION_CONNECTION_TIMEOUT, idleTimeoutSeconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memoryLimit,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, handlerContext,
                            MHD_OPTION_END);
}

/// The port the daemon listens on (the one the kernel chose for port 0); 0 if unknown.
static inline uint16_t shim_MHD_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}

/// The peer's address of a connection, or NULL.
static inline const struct sockaddr *shim_MHD_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info ? info->client_addr : NULL;
}
#endif

#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <microhttpd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Caps glibc's malloc arenas at `count` (elsewhere, does nothing). glibc gives each busy
   thread an arena of its own, up to 8 a core, and an arena keeps what it once held. */
static inline void pushtrail_limit_arenas(int count)
{
#if defined(__GLIBC__)
    mallopt(M_ARENA_MAX, count);
#else
    (void)count;
#endif
}

/* MHD_start_daemon is variadic, which Swift cannot call: this starts a daemon with the
   options pushtrail sets, all of them explicit. Each connection gets its own thread (a
   handler may block: a commit's fsync, an event stream waiting for appends), at most
   `connections` at once and `per_ip` from one address; a connection idle for `timeout`
   seconds is dropped, and each has `memory` bytes for its headers and buffers. With
   `key` and `cert` (PEM text) it speaks HTTPS through GnuTLS. The daemon can be
   quiesced (stop accepting) before it stops. */
static inline struct MHD_Daemon *pushtrail_mhd_start(
    const struct sockaddr *address, unsigned int connections, unsigned int per_ip, unsigned int timeout,
    size_t memory, size_t stack, const char *key, const char *cert, MHD_AccessHandlerCallback handler,
    void *context, MHD_RequestCompletedCallback completed)
{
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL
        | MHD_USE_ITC;
    if (key != NULL && cert != NULL) {
        return MHD_start_daemon(
            flags | MHD_USE_TLS, 0, NULL, NULL, handler, context,
            MHD_OPTION_SOCK_ADDR, address,
            MHD_OPTION_CONNECTION_LIMIT, connections,
            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
            MHD_OPTION_CONNECTION_TIMEOUT, timeout,
            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
            MHD_OPTION_THREAD_STACK_SIZE, stack,
            MHD_OPTION_HTTPS_MEM_KEY, key,
            MHD_OPTION_HTTPS_MEM_CERT, cert,
            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
            MHD_OPTION_END);
    }
    return MHD_start_daemon(
        flags, 0, NULL, NULL, handler, context,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_CONNECTION_LIMIT, connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
        MHD_OPTION_THREAD_STACK_SIZE, stack,
        MHD_OPTION_NOTIFY_COMPLETED, completed, context,
        MHD_OPTION_END);
}

/* The port the daemon listens on (the one the system chose, for port 0). */
static inline uint16_t pushtrail_mhd_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* Whether the connection's client is on this host (127.0.0.0/8, ::1, or an IPv4 loopback
   address mapped into IPv6). */
static inline int pushtrail_mhd_client_is_loopback(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return 0;
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        const unsigned char *a = (const unsigned char *)&((const struct sockaddr_in *)address)->sin_addr;
        return a[0] == 127;
    }
    if (address->sa_family == AF_INET6) {
        const unsigned char *a = ((const struct sockaddr_in6 *)address)->sin6_addr.s6_addr;
        static const unsigned char loopback[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        int same = 1, prefix = 1;
        for (int i = 0; i < 16; i++) same = same && a[i] == loopback[i];
        for (int i = 0; i < 12; i++) prefix = prefix && a[i] == mapped[i];
        return same || (prefix && a[12] == 127);
    }
    return 0;
}

/* A body whose length is not known in advance: sent chunked. */
static inline struct MHD_Response *pushtrail_mhd_stream(
    size_t block, MHD_ContentReaderCallback reader, void *context, MHD_ContentReaderFreeCallback release)
{
    return MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block, reader, context, release);
}

/* What a content reader returns at the end of its stream, and on an error. */
static const ssize_t pushtrail_mhd_end_of_stream = MHD_CONTENT_READER_END_OF_STREAM;
static const ssize_t pushtrail_mhd_stream_error = MHD_CONTENT_READER_END_WITH_ERROR;

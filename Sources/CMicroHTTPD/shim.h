#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic, which Swift cannot call: this starts a daemon with the
   options pushtrail sets, all of them explicit. The daemon runs its own polling thread
   pool (`threads`), refuses more than `connections` at once and `per_ip` from one
   address, drops a connection idle for `timeout` seconds, and gives each connection
   `memory` bytes for its headers and buffers. */
static inline struct MHD_Daemon *pushtrail_mhd_start(
    const struct sockaddr *address, unsigned int threads, unsigned int connections, unsigned int per_ip,
    unsigned int timeout, size_t memory, MHD_AccessHandlerCallback handler, void *context,
    MHD_RequestCompletedCallback completed)
{
    return MHD_start_daemon(
        MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, handler, context,
        MHD_OPTION_SOCK_ADDR, address,
        MHD_OPTION_THREAD_POOL_SIZE, threads,
        MHD_OPTION_CONNECTION_LIMIT, connections,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory,
        MHD_OPTION_NOTIFY_COMPLETED, completed, context,
        MHD_OPTION_END);
}

/* The port the daemon listens on (the one the system chose, for port 0). */
static inline uint16_t pushtrail_mhd_port(struct MHD_Daemon *daemon)
{
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

/* minitcp: the exported descriptor and the fabric (init, finalize, query). */
#define _POSIX_C_SOURCE 200809L
#include "minitcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Failures return through weft_kit_whyf: one line into why saying what to change. */
static int mt_init(const weft_plugin_host_t *host, weft_fabric_t **out, char *why,
                   size_t why_len)
{
    /* Refuses out == NULL; host becomes NULL when it is too old to hold a log function (the
     * kit's log helpers then drop lines), so the host struct of any core is read safely. */
    int rc = weft_kit_fabric_init_begin(MT_NAME, out, &host, why, why_len);
    if (rc != WEFT_PLUGIN_OK)
        return rc;
    /* Every endpoint publishes this address, so it must be one the other processes reach:
     * loopback (the default) serves one node only. */
    const char *env = getenv("WEFT_MINITCP_ADDR");
    const char *text = env && *env ? env : "127.0.0.1";
    struct in_addr ip;
    if (inet_pton(AF_INET, text, &ip) != 1)
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                             "WEFT_MINITCP_ADDR=%s is not an IPv4 address: set it to this "
                             "node's address (e.g. 10.0.0.5)", text);
    if (ip.s_addr == htonl(INADDR_ANY))
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_INVALID,
                             "WEFT_MINITCP_ADDR=%s cannot be published to other processes: set "
                             "it to this node's address", text);
    /* Fail here, with a reason, rather than at the first ep_open when the address is not
     * one of this node's. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_OTHER, "socket: %s", strerror(errno));
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr = ip;
    rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
    int err = errno;
    close(fd);
    if (rc != 0)
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_UNREACHABLE,
                             "cannot bind to %s (%s): set WEFT_MINITCP_ADDR to an IPv4 address "
                             "of this node", text, strerror(err));

    weft_fabric_t *fab = calloc(1, sizeof *fab);
    if (!fab)
        return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_NOMEM, "out of memory");
    fab->host = host;
    fab->ipv4 = ip.s_addr;
    mt_log(fab, WEFT_LOG_DEBUG, "listening on %s (WEFT_MINITCP_ADDR)", text);
    *out = fab;
    return WEFT_PLUGIN_OK;
}

static int mt_finalize(weft_fabric_t *fab)
{
    if (!fab)
        return WEFT_PLUGIN_ERR_INVALID;
    free(fab);
    return WEFT_PLUGIN_OK;
}

static int mt_query(weft_fabric_t *fab, weft_fabric_caps_t *caps)
{
    if (!fab)
        return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric_caps_t all;
    memset(&all, 0, sizeof all);
    all.flags = WEFT_FABRIC_CAP_WAIT_FD; /* not THREAD_SAFE: the core serializes each endpoint */
    all.max_message_size = MT_MAX_MESSAGE;
    all.inject_size = 0;                 /* every send completes once the socket took it */
    all.eager_size = MT_MAX_MESSAGE;     /* no rendezvous: every message goes eagerly */
    all.max_address_size = MT_ADDR_SIZE;
    /* An older core passes a shorter struct: the kit writes nothing past its struct_size. */
    return weft_kit_caps_write(caps, &all);
}

/* Designated initializers: the operations that newer ABI minors append (global kernels,
 * ...) stay NULL, which the core reads as "not supported". */
static const weft_fabric_ops_v1_t mt_ops = {
    .init = mt_init,
    .finalize = mt_finalize,
    .query = mt_query,
    .ep_open = mt_ep_open,
    .ep_close = mt_ep_close,
    .ep_address = mt_ep_address,
    .ep_connect = mt_ep_connect,
    .ep_disconnect = mt_ep_disconnect,
    .tag_send = mt_tag_send,
    .tag_recv = mt_tag_recv,
    .tag_probe = mt_tag_probe,
    .cancel = mt_cancel,
    .ep_progress = mt_ep_progress,
    .ep_wait_fd = mt_ep_wait_fd,
    .ep_arm = mt_ep_arm,
};

/* The one exported symbol, weft_plugin_v1, with the ABI of the plugin.h compiled against.
 * Priority 1, the lowest of the fabrics: the loader takes minitcp only when asked for it
 * (WEFT_FABRIC=minitcp) or when no other fabric opens. */
WEFT_KIT_PLUGIN_DEFINE(WEFT_PLUGIN_KIND_FABRIC, MT_NAME,
                       "1.0 (plain TCP sockets; the plugin skeleton)", 1, &mt_ops);

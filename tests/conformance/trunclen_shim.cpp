/* libweft-trunclen.so: a fabric plugin that breaks one rule of weft/plugin.h on purpose, so
 * that tests/conformance can check that the conformance kit rejects it.  It wraps another
 * fabric plugin (TRUNCLEN_INNER: the minitcp skeleton) and changes one thing: a receive that
 * completes with WEFT_PLUGIN_ERR_TRUNCATE reports the bytes delivered (its buffer's length)
 * instead of the sent length, which plugin.h requires.  With WEFT_TRUNCLEN_HONEST=1 it passes
 * the inner plugin's completions on unchanged, to show that the wrapper breaks nothing else.
 */
#include <weft/plugin.h>

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace {

weft_fabric_ops_v1_t g_ops;                       /* the inner table, some operations replaced */
const weft_fabric_ops_v1_t *g_inner = nullptr;
bool g_honest = false;

struct Posted {
    weft_fabric_complete_fn complete;             /* the endpoint's own callback */
    size_t recv_len;                              /* a receive's buffer; SIZE_MAX for a send */
};
std::mutex g_lock;
std::unordered_map<weft_fabric_ep_t *, weft_fabric_complete_fn> g_eps;
std::unordered_map<void *, Posted> g_posted;      /* by context, until its completion */

void shim_complete(void *context, const weft_fabric_completion_t *c)
{
    Posted p{};
    {
        std::lock_guard<std::mutex> g(g_lock);
        auto it = g_posted.find(context);
        if (it == g_posted.end())
            std::abort(); /* a completion for nothing posted: the inner plugin's bug, not ours */
        p = it->second;
        g_posted.erase(it);
    }
    weft_fabric_completion_t out = *c;
    if (!g_honest && p.recv_len != SIZE_MAX && out.status == WEFT_PLUGIN_ERR_TRUNCATE &&
        out.length > p.recv_len)
        out.length = p.recv_len; /* the bug: what was delivered, not what was sent */
    /* Not under g_lock: the caller may post again from inside complete(). */
    p.complete(context, &out);
}

int shim_ep_open(weft_fabric_t *fabric, const weft_fabric_ep_attr_t *attr, weft_fabric_ep_t **ep)
{
    if (!attr || !ep || attr->struct_size < WEFT_FABRIC_EP_ATTR_SIZE_V1_0 || !attr->complete)
        return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric_ep_attr_t mine{};
    std::memcpy(&mine, attr, attr->struct_size < sizeof mine ? attr->struct_size : sizeof mine);
    mine.complete = shim_complete;
    int rc = g_inner->ep_open(fabric, &mine, ep);
    if (rc == WEFT_PLUGIN_OK) {
        std::lock_guard<std::mutex> g(g_lock);
        g_eps[*ep] = attr->complete;
    }
    return rc;
}

int shim_ep_close(weft_fabric_ep_t *ep)
{
    int rc = g_inner->ep_close(ep); /* completes what is pending, through shim_complete */
    std::lock_guard<std::mutex> g(g_lock);
    g_eps.erase(ep);
    return rc;
}

/* Records an operation before posting it (the posting call may complete it), and forgets it
 * when the post failed. */
template <class Post>
int shim_post(weft_fabric_ep_t *ep, void *context, size_t recv_len, Post post)
{
    {
        std::lock_guard<std::mutex> g(g_lock);
        auto it = g_eps.find(ep);
        if (it == g_eps.end())
            return WEFT_PLUGIN_ERR_INVALID;
        g_posted[context] = Posted{it->second, recv_len};
    }
    int rc = post();
    if (rc != WEFT_PLUGIN_OK) {
        std::lock_guard<std::mutex> g(g_lock);
        g_posted.erase(context);
    }
    return rc;
}

int shim_tag_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *peer, const void *buf, size_t len,
                  uint64_t tag, void *context)
{
    return shim_post(ep, context, SIZE_MAX,
                     [&] { return g_inner->tag_send(ep, peer, buf, len, tag, context); });
}

int shim_tag_recv(weft_fabric_ep_t *ep, void *buf, size_t len, uint64_t tag, uint64_t ignore,
                  void *context)
{
    return shim_post(ep, context, len,
                     [&] { return g_inner->tag_recv(ep, buf, len, tag, ignore, context); });
}

/* Loads the inner plugin when this one is loaded; on failure the table stays empty, which the
 * loader and the kit report as missing operations. */
__attribute__((constructor)) void shim_load()
{
    const char *honest = std::getenv("WEFT_TRUNCLEN_HONEST");
    g_honest = honest && *honest && std::strcmp(honest, "0") != 0;
    void *dl = dlopen(TRUNCLEN_INNER, RTLD_NOW | RTLD_LOCAL);
    if (!dl)
        return;
    auto *inner = static_cast<const weft_plugin_v1_t *>(dlsym(dl, WEFT_PLUGIN_SYMBOL));
    if (!inner || inner->abi_major != WEFT_PLUGIN_ABI_MAJOR ||
        inner->abi_minor != WEFT_PLUGIN_ABI_MINOR || inner->kind != WEFT_PLUGIN_KIND_FABRIC ||
        !inner->ops)
        return;
    g_inner = static_cast<const weft_fabric_ops_v1_t *>(inner->ops);
    g_ops = *g_inner;
    g_ops.ep_open = shim_ep_open;
    g_ops.ep_close = shim_ep_close;
    g_ops.tag_send = shim_tag_send;
    g_ops.tag_recv = shim_tag_recv;
    /* Operations whose completions this wrapper does not route (minitcp has none of them). */
    g_ops.kernel_table = nullptr;
    g_ops.kernel_bind = nullptr;
    g_ops.kernel_unbind = nullptr;
    g_ops.kernel_send = nullptr;
}

} // namespace

extern "C" __attribute__((visibility("default"))) const weft_plugin_v1_t weft_plugin_v1 = {
    WEFT_PLUGIN_ABI_MAJOR,
    WEFT_PLUGIN_ABI_MINOR,
    WEFT_PLUGIN_KIND_FABRIC,
    "trunclen",
    "1.0 (test only: minitcp reporting a truncated receive's delivered length)",
    0,
    &g_ops,
};

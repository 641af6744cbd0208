/* OFI fabric plugin: the exported plugin descriptor, provider selection, fabric
 * init/finalize/query, logging. */
#include "ofi_internal.hpp"

#include <algorithm>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

namespace {

/* "1.0 (libfabric 1.17)": the libfabric part is the library actually loaded. */
char ofi_version_text[96] = "1.0 (libfabric)";

__attribute__((constructor)) void ofi_version_fill() {
    uint32_t v = fi_version();
    snprintf(ofi_version_text, sizeof(ofi_version_text), "%d.%d (libfabric %u.%u)", WEFT_PLUGIN_ABI_MAJOR,
             WEFT_PLUGIN_ABI_MINOR, FI_MAJOR(v), FI_MINOR(v));
}

/* The sockets provider loses messages under Weft's traffic here; never pick it, even when
 * a layered name ("sockets;ofi_rxm") or FI_PROVIDER asks for it. */
bool ofi_names_sockets(const char *prov) {
    std::string s(prov ? prov : "");
    size_t start = 0;
    while (start <= s.size()) {
        size_t end = s.find(';', start);
        if (end == std::string::npos) end = s.size();
        if (s.compare(start, end - start, "sockets") == 0) return true;
        start = end + 1;
    }
    return false;
}

/* Match bits a provider honours: mem_tag_format's highest set bit bounds the tag.  0 means
 * the provider did not say, which by the spec means 64 bits. */
int ofi_tag_bits(const struct fi_info *info) {
    uint64_t fmt = info->ep_attr ? info->ep_attr->mem_tag_format : 0;
    return fmt == 0 ? 64 : 64 - __builtin_clzll(fmt);
}

/* fi_getinfo for one provider name; on success *out is the chosen entry (a copy). */
int ofi_getinfo(const char *prov, const char *node, struct fi_info **out, std::string &reason) {
    struct fi_info *hints = fi_allocinfo();
    if (!hints) {
        reason = "out of memory";
        return WEFT_PLUGIN_ERR_NOMEM;
    }
    hints->caps = FI_TAGGED;
    /* Every op context begins with a struct fi_context2, so either mode is fine; no other
     * mode bit (FI_BUFFERED_RECV, FI_MSG_PREFIX, ...) is supported. */
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->av_type = FI_AV_TABLE;
    /* We never register memory (no RMA yet), so every mode bit that only concerns RMA keys
     * is fine; FI_MR_LOCAL (register send/recv buffers) and FI_MR_HMEM are left out, which
     * makes fi_getinfo skip providers that need them. */
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    /* MPI's non-overtaking rule needs send-after-send ordering between two endpoints. */
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    hints->fabric_attr->prov_name = strdup(prov);

    struct fi_info *list = nullptr;
    int ret =
        fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), node, nullptr, node ? FI_SOURCE : 0, hints, &list);
    fi_freeinfo(hints);
    if (ret != 0) {
        reason = std::string("fi_getinfo: ") + fi_strerror(-ret) +
            " (no RDM tagged endpoint without FI_MR_LOCAL; see `fi_info -p '" + prov + "' -t FI_EP_RDM -c FI_TAGGED`)";
        return WEFT_PLUGIN_ERR_UNSUPPORTED;
    }
    reason = "no entry with 64-bit match bits";
    for (struct fi_info *i = list; i; i = i->next) {
        if (ofi_names_sockets(i->fabric_attr->prov_name)) continue;
        int bits = ofi_tag_bits(i);
        if (bits < 64) {
            reason = "provider matches only " + std::to_string(bits) + " tag bits; Weft needs 64";
            continue;
        }
        *out = fi_dupinfo(i);
        fi_freeinfo(list);
        return *out ? WEFT_PLUGIN_OK : WEFT_PLUGIN_ERR_NOMEM;
    }
    fi_freeinfo(list);
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}

/* Opens the fabric for one provider and a trial endpoint: it proves the provider works
 * here (shm needs /dev/shm, tcp a usable interface), measures the address and finds out
 * whether the CQ can have a wait fd. */
int ofi_open_provider(weft_fabric *fabric, const char *prov, const char *node, std::string &reason) {
    if (ofi_names_sockets(prov)) {
        reason =
            "the sockets provider is not supported (it is broken here); use "
            "WEFT_OFI_PROVIDER=shm or WEFT_OFI_PROVIDER='tcp;ofi_rxm'";
        return WEFT_PLUGIN_ERR_UNSUPPORTED;
    }
    struct fi_info *info = nullptr;
    int rc = ofi_getinfo(prov, node, &info, reason);
    if (rc != WEFT_PLUGIN_OK) return rc;
    int ret = fi_fabric(info->fabric_attr, &fabric->fabric, nullptr);
    if (ret != 0) {
        reason = std::string("fi_fabric: ") + fi_strerror(-ret);
        fi_freeinfo(info);
        return ofi_errno_to_plugin(ret);
    }
    fabric->info = info;

    auto *trial = new (std::nothrow) weft_fabric_ep();
    if (!trial || weft_kit_ep_lock_init(&trial->lock, 1) != 0) {
        delete trial;
        reason = "out of memory";
        rc = WEFT_PLUGIN_ERR_NOMEM;
    } else {
        trial->fabric = fabric;
        const char *what = "";
        bool wait_fd = true;
        rc = ofi_ep_resources_open(fabric, trial, true, &what);
        if (rc != WEFT_PLUGIN_OK) {
            /* Perhaps only the wait object is missing: try without it. */
            wait_fd = false;
            rc = ofi_ep_resources_open(fabric, trial, false, &what);
        }
        if (rc == WEFT_PLUGIN_OK) {
            size_t len = 0;
            char probe[1];
            ret = fi_getname(&trial->ep->fid, probe, &len);
            if (ret != 0 && ret != -FI_ETOOSMALL) {
                reason = std::string("fi_getname: ") + fi_strerror(-ret);
                rc = ofi_errno_to_plugin(ret);
            }
            /* Names of other endpoints may be longer (shm: more digits); leave room. */
            fabric->address_size = WEFT_KIT_ADDR_HEADER_SIZE + (2 * len < 256 ? 256 : 2 * len);
            if (wait_fd && trial->wait_fd >= 0) fabric->flags |= WEFT_FABRIC_CAP_WAIT_FD;
            ofi_ep_resources_close(trial);
        } else {
            reason = std::string(what) + " failed (rc " + std::to_string(rc) + ")";
        }
        weft_kit_ep_lock_destroy(&trial->lock);
        delete trial;
    }
    if (rc != WEFT_PLUGIN_OK) {
        fi_close(&fabric->fabric->fid);
        fabric->fabric = nullptr;
        fi_freeinfo(info);
        fabric->info = nullptr;
        return rc;
    }
    snprintf(fabric->provider, sizeof(fabric->provider), "%s", info->fabric_attr->prov_name);
    fabric->inject_size = info->tx_attr ? info->tx_attr->inject_size : 0;
    fabric->iov_limit =
        info->tx_attr && info->rx_attr ? std::min(info->tx_attr->iov_limit, info->rx_attr->iov_limit) : 1;
    /* rxm copies messages up to FI_OFI_RXM_BUFFER_SIZE (16 KiB) eagerly; shm's inline
     * and inject protocols end at its inject size. */
    fabric->eager_size = strstr(fabric->provider, "ofi_rxm") ? 16384 : fabric->inject_size;
    return WEFT_PLUGIN_OK;
}

}  // namespace

int ofi_errno_to_plugin(int fi_err) {
    if (fi_err < 0) fi_err = -fi_err;
    switch (fi_err) {
        case 0: return WEFT_PLUGIN_OK;
        case FI_EAGAIN:
        case FI_EBUSY: return WEFT_PLUGIN_ERR_AGAIN;
        case FI_ENOMEM:
        case FI_ENOSPC: return WEFT_PLUGIN_ERR_NOMEM;
        case FI_ETRUNC:
        case FI_EMSGSIZE: return WEFT_PLUGIN_ERR_TRUNCATE;
        case FI_ECANCELED: return WEFT_PLUGIN_ERR_CANCELED;
        case FI_EADDRNOTAVAIL:
        case FI_EHOSTUNREACH:
        case FI_ENETUNREACH: return WEFT_PLUGIN_ERR_UNREACHABLE;
        case FI_ENOSYS:
        case FI_EOPNOTSUPP: return WEFT_PLUGIN_ERR_UNSUPPORTED;
        case FI_EINVAL: return WEFT_PLUGIN_ERR_INVALID;
        case FI_ENOENT:
        case FI_ENOMSG: return WEFT_PLUGIN_ERR_NOT_FOUND;
        case FI_ECONNREFUSED:
        case FI_ECONNRESET:
        case FI_ECONNABORTED:
        case FI_ENOTCONN:
        case FI_ESHUTDOWN:
        case FI_ETIMEDOUT:
        case FI_EIO: return WEFT_PLUGIN_ERR_PEER_FAILED;
        default: return WEFT_PLUGIN_ERR_OTHER;
    }
}

int ofi_fabric_init(const weft_plugin_host_t *host, weft_fabric_t **fabric_out, char *why, size_t why_len) {
    /* A host too old to hold log is dropped: the plugin runs without logging. */
    int rc = weft_kit_fabric_init_begin(OFI_PLUGIN_NAME, fabric_out, &host, why, why_len);
    if (rc != WEFT_PLUGIN_OK) return rc;

    auto *fabric = new (std::nothrow) weft_fabric();
    if (!fabric) return weft_kit_whyf(why, why_len, WEFT_PLUGIN_ERR_NOMEM, "ofi: out of memory");
    fabric->host = host;
    weft_kit_list_init(&fabric->eps);
    /* Shared endpoints take the plugin's per-endpoint lock around every libfabric call,
     * so the FI_THREAD_DOMAIN contract (one caller per domain at a time) still holds. */
    fabric->flags = WEFT_FABRIC_CAP_THREAD_SAFE;

    /* WEFT_OFI_PROVIDER wins over the hint weft_ofi_provider; neither: tcp;ofi_rxm. */
    const char *prov = getenv("WEFT_OFI_PROVIDER");
    const char *source = "WEFT_OFI_PROVIDER";
    if (!prov || !*prov) {
        prov = weft_kit_host_hint(host, "weft_ofi_provider");
        source = "hint weft_ofi_provider";
    }
    /* rxm 1.17 over tcp loses a receive that truncates a message it placed through a
     * dynamically provided buffer (the error stays inside rxm, the receive never
     * completes).  Its buffered path truncates correctly.  libfabric reads this once, at
     * its first fi_getinfo, and a value the user set wins. */
    setenv("FI_OFI_RXM_ENABLE_DYN_RBUF", "0", 0);
    std::string reason;
    if (prov && *prov) {
        rc = ofi_open_provider(fabric, prov, nullptr, reason);
        if (rc != WEFT_PLUGIN_OK)
            weft_kit_whyf(why, why_len, rc, "ofi: provider '%s' (from %s) cannot open: %s", prov, source,
                          reason.c_str());
        else if (strcmp(fabric->provider, "shm") == 0)
            ofi_log(fabric, WEFT_LOG_WARN,
                    "shm (libfabric 1.17) never completes a receive that truncates a message "
                    "above %zu bytes; use it only where no receive is too small",
                    fabric->inject_size);
    } else {
        /* Not shm, although it is the natural intra-node choice: shm 1.17 never completes
         * a receive that truncates a message above its inject size (4 KiB): with CMA it
         * spins in process_vm_readv, with SAR or mmap the receive just stays pending.
         * tcp;ofi_rxm on loopback passes the whole contract; set WEFT_OFI_PROVIDER (and
         * FI_TCP_IFACE) for other nodes or to pick shm anyway. */
        rc = ofi_open_provider(fabric, "tcp;ofi_rxm", "127.0.0.1", reason);
        if (rc != WEFT_PLUGIN_OK)
            weft_kit_whyf(why, why_len, rc,
                          "ofi: default provider tcp;ofi_rxm on 127.0.0.1 cannot open: %s; set "
                          "WEFT_OFI_PROVIDER to a provider `fi_info -t FI_EP_RDM -c FI_TAGGED` "
                          "lists",
                          reason.c_str());
    }
    if (rc != WEFT_PLUGIN_OK) {
        delete fabric;
        return rc;
    }
    ofi_log(fabric, WEFT_LOG_INFO, "libfabric %u.%u provider %s opened (inject %zu bytes%s)", FI_MAJOR(fi_version()),
            FI_MINOR(fi_version()), fabric->provider, fabric->inject_size,
            (fabric->flags & WEFT_FABRIC_CAP_WAIT_FD) ? ", wait fd" : "");
    *fabric_out = fabric;
    return WEFT_PLUGIN_OK;
}

int ofi_fabric_finalize(weft_fabric_t *fabric) {
    if (!fabric) return WEFT_PLUGIN_ERR_INVALID;
    for (;;) {
        weft_kit_link_t *first;
        {
            std::lock_guard<std::mutex> g(fabric->lock);
            first = weft_kit_list_first(&fabric->eps);
        }
        if (!first) break;
        weft_fabric_ep *ep = WEFT_KIT_CONTAINER_OF(first, weft_fabric_ep, link);
        ofi_log(fabric, WEFT_LOG_WARN, "finalize: closing an endpoint the core left open");
        ofi_ep_close(ep);
    }
    if (fabric->fabric) fi_close(&fabric->fabric->fid);
    fi_freeinfo(fabric->info);
    delete fabric;
    return WEFT_PLUGIN_OK;
}

int ofi_fabric_query(weft_fabric_t *fabric, weft_fabric_caps_t *caps) {
    if (!fabric || !caps || caps->struct_size < sizeof(uint32_t) * 2) return WEFT_PLUGIN_ERR_INVALID;
    weft_fabric_caps_t c{};
    c.flags = fabric->flags;
    c.max_message_size = fabric->info->ep_attr->max_msg_size;
    c.inject_size = fabric->inject_size;
    c.eager_size = fabric->eager_size;
    c.max_address_size = fabric->address_size;
    c.context_space = 0; /* per-operation state (fi_context2 included) lives in our op pool */
    c.iov_limit = fabric->iov_limit;
    return weft_kit_caps_write(caps, &c);
}

namespace {
/* Every operation by name, in the order of weft_fabric_ops_v1_t; NULL: not supported. */
const weft_fabric_ops_v1_t ofi_ops = {
    .init = ofi_fabric_init,
    .finalize = ofi_fabric_finalize,
    .query = ofi_fabric_query,
    .ep_open = ofi_ep_open,
    .ep_close = ofi_ep_close,
    .ep_address = ofi_ep_address,
    .ep_connect = ofi_ep_connect,
    .ep_disconnect = ofi_ep_disconnect,
    .tag_send = ofi_tag_send,
    .tag_recv = ofi_tag_recv,
    .tag_probe = ofi_tag_probe,
    .cancel = ofi_tag_cancel,
    .ep_progress = ofi_ep_progress,
    .ep_wait_fd = ofi_ep_wait_fd,
    .ep_arm = ofi_ep_arm,
    .kernel_table = nullptr, /* no global kernels */
    .kernel_bind = nullptr,
    .kernel_unbind = nullptr,
    .kernel_send = nullptr,
    .ep_peer_failed = ofi_ep_peer_failed,
    .stats = nullptr, /* not kept */
    .tag_send_now = ofi_tag_send_now,
    /* Only where the provider gathers: an iov_limit of 1 gains nothing over packing. */
    .tag_sendv = ofi_tag_sendv,
    .tag_recvv = ofi_tag_recvv,
    .tag_send_sync = nullptr, /* optional; the core acknowledges synchronous messages */
};
}  // namespace

WEFT_KIT_PLUGIN_DEFINE(WEFT_PLUGIN_KIND_FABRIC, OFI_PLUGIN_NAME, ofi_version_text, 50, &ofi_ops);

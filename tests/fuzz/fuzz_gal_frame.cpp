// Fuzz target: the Galapagos fabric's receive path (plugins/galapagos/): packet headers
// (gal_wire.hpp: header_decode, address_decode) and the reassembly of a byte
// stream from a peer into messages (gal_conn.cpp: gal_conn_read and handle_packet, through
// gal_node_progress as the plugin runs it; gal_tag.cpp: matching and delivery; gal_kernels.cpp:
// raw packets for bound global kernels).
//
// The fabric is the real one (gal_init, once, with a one-node cluster file for kernel bindings);
// each input opens endpoints through the plugin's operations, attaches one connection whose
// socket is the end of a socketpair, and writes the stream into the other end in chunks, running
// the node's progress after each.  Between chunks the input's control records post, cancel and
// probe receives, close and open endpoints, bind and unbind kernels.
//
// Input: [n: control count % 16] [config] n x [offset u16, action, arg, arg2] [stream...]
//
// Invariants, against a reference framer written here from gal_wire.hpp's description:
//  - the connection dies exactly when the reference says the stream breaks (bad header, bad
//    fragment, end of stream inside a packet or message), and not otherwise;
//  - every completed receive names a message the reference completed for that endpoint, with
//    the same tag and length, and holds its first bytes (TRUNCATE exactly when it did not fit);
//    its tag matches what the receive asked for; each message is delivered at most once;
//  - every message the reference completed for an endpoint that stayed open is delivered to a
//    receive or still queued as unexpected (drained with probe + receive at the end);
//  - every receive completes at most once, and exactly once unless its endpoint was closed while
//    it was filling; cancel says NOT_FOUND exactly for a receive already completed;
//  - encode(decode(x)) == x for headers and addresses that decode (the handshake has its own
//    target, fuzz_gal_handshake);
//  - no file descriptor leaks (ASan/LSan cover memory).
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_common.hpp"
#include "gal_internal.hpp"
#include "gal_wire.hpp"

namespace {

constexpr size_t first_data = gal::first_fragment_data;  // 8976
constexpr size_t next_data = gal::max_packet_bytes;      // 8992
constexpr int max_eps = 3;
constexpr int nkernels = 4;

uint64_t le64(const uint8_t *p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;  // little-endian host (x86-64, aarch64)
}
size_t round8(uint64_t n) { return static_cast<size_t>((n + 7) / 8 * 8); }

weft_fabric *g_fabric;
std::string g_cluster_path;

const weft_plugin_host_t g_host = {sizeof(weft_plugin_host_t), [](int, const char *, const char *) {}, nullptr,
                                   nullptr};

// A receive the harness posted, and what completed it.
struct recv_rec {
    int ep_serial;
    uint64_t tag, ignore;
    size_t cap;
    std::vector<uint8_t> buf;
    int completions = 0;
    weft_fabric_completion_t c{};
    bool may_vanish = false;  // its endpoint closed while it was being filled
};

void on_complete(void *context, const weft_fabric_completion_t *c) {
    auto *r = static_cast<recv_rec *>(context);
    ++r->completions;
    r->c = *c;
}

struct ep_rec {
    weft_fabric_ep *ep = nullptr;
    int serial = -1;
};

// A message as the reference framer sees it.
struct ref_msg {
    int ep_serial;  // -1: no endpoint (dropped)
    int slot;
    uint64_t tag;
    uint64_t length;
    std::string data;
    bool done = false;
    bool lost = false;  // its endpoint closed while it arrived
    bool delivered = false;
};

struct binding {
    int ep_serial = -1;
    uint64_t tag_base = 0;
    uint32_t shift = 0;
};

struct harness {
    ep_rec eps[max_eps];
    int next_serial = 0;
    std::vector<std::unique_ptr<recv_rec>> recvs;
    binding bindings[nkernels];

    // Reference framer state.
    std::string pending;  // bytes written, not yet framed
    bool dead = false;
    bool active = false;
    size_t cur = 0;  // index in msgs of the message being reassembled
    std::vector<ref_msg> msgs;

    int serial_at_slot(int slot) const {
        for (auto &e : eps)
            if (e.ep && e.ep->slot == slot) return e.serial;
        return -1;
    }
    ep_rec *by_serial(int serial) {
        for (auto &e : eps)
            if (e.ep && e.serial == serial) return &e;
        return nullptr;
    }

    // Frames what `pending` holds, as gal_conn_read does after a read.
    void frame() {
        size_t pos = 0;
        while (!dead && pending.size() - pos >= 8) {
            const uint8_t *h = reinterpret_cast<const uint8_t *>(pending.data()) + pos;
            uint64_t w = le64(h);
            uint32_t flits = w & 0xffff, src = (w >> 16) & 0xff, dest = (w >> 24) & 0xff, kind = (w >> 32) & 0xff;
            if ((w >> 40) != 0 || kind > 3 || flits > gal::max_packet_flits) {
                dead = true;
                break;
            }
            size_t need = 8 + size_t{flits} * 8;
            if (pending.size() - pos < need) break;
            packet(dest, src, kind, flits, h + 8);
            pos += need;
        }
        pending.erase(0, pos);
    }

    void packet(uint32_t dest, uint32_t src, uint32_t kind, uint32_t flits, const uint8_t *p) {
        size_t bytes = size_t{flits} * 8;
        if (kind == 1) {
            if (active || flits < 2) {
                dead = true;
                return;
            }
            uint64_t tag = le64(p), length = le64(p + 8);
            size_t first = length < first_data ? static_cast<size_t>(length) : first_data;
            if (bytes - 16 != round8(first)) {
                dead = true;
                return;
            }
            ref_msg m{serial_at_slot(static_cast<int>(dest)), static_cast<int>(dest), tag, length, {}};
            m.data.assign(reinterpret_cast<const char *>(p + 16), first);
            m.done = m.data.size() == length;
            msgs.push_back(std::move(m));
            cur = msgs.size() - 1;
            active = !msgs[cur].done;
        } else if (kind == 2) {
            if (!active || static_cast<int>(dest) != msgs[cur].slot) {
                dead = true;
                return;
            }
            ref_msg &m = msgs[cur];
            uint64_t left = m.length - m.data.size();
            size_t data = left < next_data ? static_cast<size_t>(left) : next_data;
            if (bytes != round8(data)) {
                dead = true;
                return;
            }
            m.data.append(reinterpret_cast<const char *>(p), data);
            m.done = m.data.size() == m.length;
            active = !m.done;
        } else if (kind == 0) {
            if (dest >= nkernels || bindings[dest].ep_serial < 0) return;  // nobody hosts it
            const binding &b = bindings[dest];
            ep_rec *e = by_serial(b.ep_serial);
            FUZZ_CHECK(e != nullptr);
            ref_msg m{b.ep_serial, e->ep->slot, b.tag_base | uint64_t{src} << b.shift, bytes, {}};
            m.data.assign(reinterpret_cast<const char *>(p), bytes);
            m.done = true;
            msgs.push_back(std::move(m));
        }
        // kind 3 (route): ignored by software nodes.
    }

    bool open_ep() {
        for (auto &e : eps) {
            if (e.ep) continue;
            weft_fabric_ep_attr_t attr{sizeof attr, 1, on_complete, 0};
            weft_fabric_ep_t *ep = nullptr;
            FUZZ_CHECK(gal_ep_open(g_fabric, &attr, &ep) == WEFT_PLUGIN_OK && ep);
            e.ep = ep;
            e.serial = next_serial++;
            return true;
        }
        return false;
    }

    void close_ep(ep_rec &e, gal_conn *c) {
        if (!e.ep) return;
        // A message (and the receive it fills) still arriving for this endpoint is dropped.
        if (c->rx.active && c->rx.ep == e.ep && c->rx.recv)
            static_cast<recv_rec *>(c->rx.recv->context)->may_vanish = true;
        WEFT_KIT_LIST_FOREACH(link, &e.ep->unexp) {
            gal_unexp *u = gal_unexp_of(link);
            if (u->recv) static_cast<recv_rec *>(u->recv->context)->may_vanish = true;
        }
        if (active && msgs[cur].ep_serial == e.serial) msgs[cur].lost = true;
        for (auto &b : bindings)
            if (b.ep_serial == e.serial) b = binding{};
        FUZZ_CHECK(gal_ep_close(e.ep) == WEFT_PLUGIN_OK);
        e.ep = nullptr;
    }

    void progress() {
        for (auto &e : eps)
            if (e.ep) FUZZ_CHECK(gal_ep_progress(e.ep) >= 0);
    }

    recv_rec *post(ep_rec &e, uint64_t tag, uint64_t ignore, size_t cap, bool null_buf) {
        auto r = std::make_unique<recv_rec>();
        r->ep_serial = e.serial;
        r->tag = tag;
        r->ignore = ignore;
        r->cap = null_buf ? 0 : cap;
        r->buf.assign(r->cap + 1, 0xa5);
        recv_rec *raw = r.get();
        recvs.push_back(std::move(r));
        FUZZ_CHECK(gal_tag_recv(e.ep, null_buf ? nullptr : raw->buf.data(), raw->cap, tag, ignore, raw) ==
                   WEFT_PLUGIN_OK);
        return raw;
    }

    void control(uint8_t action, uint8_t arg, uint8_t arg2, gal_conn *c) {
        ep_rec &e = eps[arg % max_eps];
        switch (action % 8) {
            case 0: {  // post a receive
                if (!e.ep) break;
                uint64_t tag = arg >> 4, ignore = 0;
                switch ((arg >> 2) & 3) {
                    case 0:
                    case 3: ignore = ~uint64_t{0}; break;
                    case 1: break;
                    case 2: ignore = 0xffffffff00000000ull; break;
                }
                post(e, tag, ignore, arg2 == 255 ? 0 : size_t{arg2} * 37, arg2 == 255);
                break;
            }
            case 1: {  // cancel
                if (recvs.empty()) break;
                recv_rec &r = *recvs[arg2 % recvs.size()];
                ep_rec *owner = by_serial(r.ep_serial);
                if (!owner) break;
                int rc = gal_tag_cancel(owner->ep, &r);
                FUZZ_CHECK(rc == (r.completions ? WEFT_PLUGIN_ERR_NOT_FOUND : WEFT_PLUGIN_OK));
                break;
            }
            case 2: {  // probe
                if (!e.ep) break;
                int found = -1;
                uint64_t mtag = 0;
                size_t mlen = 0;
                uint64_t tag = arg2 >> 4, ignore = (arg2 & 1) ? ~uint64_t{0} : 0;
                FUZZ_CHECK(gal_tag_probe(e.ep, tag, ignore, &found, &mtag, &mlen) == WEFT_PLUGIN_OK);
                FUZZ_CHECK(found == 0 || found == 1);
                if (found) FUZZ_CHECK(((mtag ^ tag) & ~ignore) == 0);
                break;
            }
            case 3: close_ep(e, c); break;
            case 4: open_ep(); break;
            case 5: {  // bind a kernel
                ep_rec &to = eps[arg2 % max_eps];
                if (!to.ep) break;
                uint32_t k = arg % nkernels, shift = arg2 % 57;
                uint64_t base = uint64_t{0xb0u + k} << 56;
                FUZZ_CHECK(gal_kernel_bind(to.ep, k, base, shift) == WEFT_PLUGIN_OK);
                bindings[k] = {to.serial, base, shift};
                break;
            }
            case 6: {  // unbind
                ep_rec &from = eps[arg2 % max_eps];
                if (!from.ep) break;
                uint32_t k = arg % nkernels;
                int rc = gal_kernel_unbind(from.ep, k);
                bool bound = bindings[k].ep_serial == from.serial;
                FUZZ_CHECK(rc == (bound ? WEFT_PLUGIN_OK : WEFT_PLUGIN_ERR_NOT_FOUND));
                if (bound) bindings[k] = binding{};
                break;
            }
            case 7:
                if (e.ep) {
                    int rc = gal_ep_arm(e.ep);
                    FUZZ_CHECK(rc == WEFT_PLUGIN_OK || rc == WEFT_PLUGIN_ERR_AGAIN);
                }
                break;
        }
    }

    // A completed receive must be one of the reference's messages, delivered once.
    void check_delivery(const recv_rec &r) {
        FUZZ_CHECK(r.c.status == WEFT_PLUGIN_OK || r.c.status == WEFT_PLUGIN_ERR_TRUNCATE);
        FUZZ_CHECK(((r.c.tag ^ r.tag) & ~r.ignore) == 0);
        size_t got = std::min<size_t>(r.cap, r.c.length);
        FUZZ_CHECK((r.c.status == WEFT_PLUGIN_ERR_TRUNCATE) == (r.c.length > r.cap));
        FUZZ_CHECK(r.buf[r.cap] == 0xa5);  // nothing past the buffer
        for (auto &m : msgs) {
            if (m.delivered || !m.done || m.ep_serial != r.ep_serial || m.tag != r.c.tag || m.length != r.c.length)
                continue;
            if (got && std::memcmp(m.data.data(), r.buf.data(), got) != 0) continue;
            m.delivered = true;
            return;
        }
        std::fprintf(stderr, "receive completed with tag %#llx length %zu: no such message\n",
                     static_cast<unsigned long long>(r.c.tag), static_cast<size_t>(r.c.length));
        FUZZ_CHECK(!"delivered a message the stream did not carry");
    }
};

void wire_roundtrips(const uint8_t *data, size_t size) {
    if (size >= 8) {
        gal::packet_header h;
        uint64_t w = gal::get_u64(data);
        if (gal::header_decode(w, h) == gal::header_error::none) FUZZ_CHECK(gal::header_encode(h) == w);
    }
    gal::address a;
    if (gal::address_decode(data, size, a)) {
        uint8_t out[gal::address_bytes];
        gal::address_encode(a, out);
        FUZZ_CHECK(size == gal::address_bytes && std::memcmp(out, data, sizeof out) == 0);
    }
}

}  // namespace

// A message's length comes from the peer: the receiver allocates it for an unexpected message
// and copes when that fails (counts the message as lost).  Let huge requests fail as malloc
// does, instead of ASan aborting on them (allocation-size-too-big) or libFuzzer's malloc limit.
extern "C" const char *__asan_default_options() { return "allocator_may_return_null=1:max_allocation_size_mb=1024"; }

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
    // A one-node cluster: this process (rank 0) hosts kernels 0..3.
    char path[] = "/tmp/weft-fuzz-cluster-XXXXXX";
    int fd = mkstemp(path);
    FUZZ_CHECK(fd >= 0);
    const char text[] =
        "{\"nodes\": [{\"node\": 0, \"type\": \"sw\", \"address\": \"127.0.0.1\"}],\n"
        " \"kernels\": [{\"id\": 0, \"node\": 0}, {\"id\": 1, \"node\": 0}, {\"id\": 2, \"node\": 0},"
        " {\"id\": 3, \"node\": 0}]}\n";
    FUZZ_CHECK(write(fd, text, sizeof text - 1) == static_cast<ssize_t>(sizeof text - 1));
    close(fd);
    g_cluster_path = path;
    setenv("WEFT_GALAPAGOS_CLUSTER", path, 1);
    setenv("WEFT_GALAPAGOS_TOKEN", "weft-fuzz", 1);
    char why[256] = "";
    weft_fabric_t *f = nullptr;
    if (gal_init(&g_host, &f, why, sizeof why) != WEFT_PLUGIN_OK) {
        std::fprintf(stderr, "gal_init failed: %s\n", why);
        std::abort();
    }
    g_fabric = f;
    unlink(path);  // read at init only
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    wire_roundtrips(data, size);
    const int fd_before = fuzz::lowest_free_fd();

    fuzz::input in(data, size);
    struct ctl {
        size_t at;
        uint8_t action, arg, arg2;
    };
    std::vector<ctl> ctls(in.u8() % 16);
    uint8_t cfg = in.u8();
    for (auto &k : ctls) k = {in.u16(), in.u8(), in.u8(), in.u8()};
    std::string_view stream = in.rest();
    for (auto &k : ctls) k.at = stream.empty() ? 0 : k.at % (stream.size() + 1);
    std::stable_sort(ctls.begin(), ctls.end(), [](const ctl &a, const ctl &b) { return a.at < b.at; });
    static const size_t chunk_sizes[] = {SIZE_MAX, 7, 64, 1000};
    const size_t chunk = chunk_sizes[(cfg >> 2) & 3];

    harness h;
    for (int i = 0; i <= cfg % 3; ++i) h.open_ep();
    if (cfg & 0x10)
        for (uint32_t k = 0; k < nkernels; ++k) {
            uint64_t base = uint64_t{0xb0u + k} << 56;
            FUZZ_CHECK(gal_kernel_bind(h.eps[0].ep, k, base, 8) == WEFT_PLUGIN_OK);
            h.bindings[k] = {h.eps[0].serial, base, 8};
        }

    int sv[2];
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
    gal_conn *c = gal_conn_new(sv[0], 0x1234);
    FUZZ_CHECK(c != nullptr);
    g_fabric->conns[0].store(c);
    g_fabric->nconns.store(1);
    struct epoll_event ev {};
    ev.events = EPOLLIN;
    ev.data.ptr = c;
    FUZZ_CHECK(epoll_ctl(g_fabric->epoll_fd, EPOLL_CTL_ADD, sv[0], &ev) == 0);

    // Feeds stream bytes [from, to) and runs the node's progress; checks the verdicts agree.
    auto feed = [&](size_t from, size_t to) {
        while (from < to) {
            size_t n = std::min(chunk, to - from);
            if (h.dead) break;  // the node shut the connection down: nothing more to read
            ssize_t sent;
            while ((sent = send(sv[1], stream.data() + from, n, MSG_NOSIGNAL)) < 0 && errno == EINTR) {}
            FUZZ_CHECK(sent == static_cast<ssize_t>(n));
            h.pending.append(stream.data() + from, n);
            h.frame();
            gal_node_progress(g_fabric);
            FUZZ_CHECK(c->dead.load() == h.dead);
            h.progress();
            from += n;
        }
    };
    size_t done = 0;
    for (const ctl &k : ctls) {
        feed(done, k.at);
        done = k.at;
        h.control(k.action, k.arg, k.arg2, c);
        h.progress();
    }
    feed(done, stream.size());

    // End of stream: anything left unfinished breaks the connection.
    shutdown(sv[1], SHUT_WR);
    gal_node_progress(g_fabric);
    FUZZ_CHECK(c->dead.load());
    if (!h.dead && h.active) h.msgs[h.cur].lost = true;
    h.progress();

    // Drain every endpoint's unexpected queue into receives.
    for (auto &e : h.eps) {
        if (!e.ep) continue;
        for (;;) {
            int found = 0;
            uint64_t mtag = 0;
            size_t mlen = 0;
            FUZZ_CHECK(gal_tag_probe(e.ep, 0, ~uint64_t{0}, &found, &mtag, &mlen) == WEFT_PLUGIN_OK);
            if (!found) break;
            FUZZ_CHECK(mlen <= stream.size());
            recv_rec *r = h.post(e, mtag, 0, mlen, false);
            FUZZ_CHECK(r->completions == 1 && r->c.tag == mtag && r->c.length == mlen);
        }
    }
    h.progress();
    for (auto &r : h.recvs) {
        FUZZ_CHECK(r->completions <= 1);
        if (r->completions && (r->c.status == WEFT_PLUGIN_OK || r->c.status == WEFT_PLUGIN_ERR_TRUNCATE))
            h.check_delivery(*r);
        else if (r->completions)
            FUZZ_CHECK(r->c.length == 0 &&
                       (r->c.status == WEFT_PLUGIN_ERR_CANCELED || r->c.status == WEFT_PLUGIN_ERR_PEER_FAILED));
    }
    // Messages completed for endpoints still open were all delivered.
    for (auto &m : h.msgs)
        if (m.done && !m.lost && m.ep_serial >= 0 && h.by_serial(m.ep_serial)) {
            if (!m.delivered)
                std::fprintf(stderr, "message tag %#llx length %llu to slot %d was not delivered\n",
                             static_cast<unsigned long long>(m.tag), static_cast<unsigned long long>(m.length), m.slot);
            FUZZ_CHECK(m.delivered);
        }

    static const bool verbose = std::getenv("WEFT_FUZZ_VERBOSE") != nullptr;
    if (verbose) {
        size_t done_msgs = 0, delivered = 0;
        for (auto &m : h.msgs) done_msgs += m.done, delivered += m.delivered;
        std::fprintf(stderr,
                     "gal_frame: %zu messages framed, %zu complete, %zu delivered, %zu receives, "
                     "stream %s\n",
                     h.msgs.size(), done_msgs, delivered, h.recvs.size(), h.dead ? "broken" : "ended cleanly");
    }

    // Tear down: endpoints (posted receives complete as canceled), then the connection.
    for (auto &e : h.eps) h.close_ep(e, c);
    for (auto &r : h.recvs) FUZZ_CHECK(r->completions == 1 || (r->completions == 0 && r->may_vanish));
    g_fabric->conns[0].store(nullptr);
    g_fabric->nconns.store(0);
    gal_conn_free(c);
    close(sv[1]);
    FUZZ_CHECK(fuzz::lowest_free_fd() == fd_before);
    return 0;
}

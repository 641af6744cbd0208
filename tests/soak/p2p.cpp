#include "p2p.hpp"

#include <cstdio>

#include "check.hpp"
#include "context.hpp"
#include "options.hpp"
#include "random.hpp"
#include "report.hpp"

namespace soak {

namespace {

const char *mode_name[] = {"exact", "ANY_SOURCE", "ANY_TAG", "ANY_INDEX", "ANY_SOURCE+ANY_INDEX"};

// ================================================================== tags

// round mod 32 (5 bits) | sender rank (6) | sender thread (3) | index (6), scrambled by a
// bijection of the 20-bit tag space keyed by the seed.
int make_tag(uint32_t round, int rank, int thread, int idx) {
    uint32_t x = ((round & 31u) << 15) | (uint32_t(rank) << 9) | (uint32_t(thread) << 6) | uint32_t(idx);
    const uint32_t m = 0xFFFFF;
    uint32_t k = uint32_t(mix64(opt.seed ^ 0x7A6) & m);
    x = (x * 0x9E3B5u) & m;
    x ^= x >> 7;
    x = (x ^ k) & m;
    x = (x * 0x5A4F3u) & m;
    return int(x);
}

// Messages from `from` to `to` in round r of exchange domain `dom`.
std::vector<msg_desc> pair_plan(uint64_t dom, uint32_t r, ep from, ep to, bool mux) {
    rng g(hkey(opt.seed, D_PAIR, dom, r, from.rank, from.thread, to.rank, to.thread));
    size_t n = g.pct(35) ? 0 : 1 + g.below(3);
    bool any_tag_pair = g.pct(15);
    std::vector<msg_desc> v(n);
    for (size_t k = 0; k < n; ++k) {
        msg_desc &m = v[k];
        unsigned ty = unsigned(g.below(100));
        if (ty < 70)
            m.type = WEFT_BYTE, m.es = 1, m.tname = "BYTE";
        else if (ty < 85)
            m.type = WEFT_UINT64_T, m.es = 8, m.tname = "UINT64_T";
        else
            m.type = WEFT_INT32_T, m.es = 4, m.tname = "INT32_T";
        m.count = pick_size(g, opt.max_size) / m.es;
        m.cap = m.count + (g.pct(50) ? 0 : 1 + g.below(16));
        m.tag = make_tag(r, from.rank, from.thread, int(k));
        unsigned md = unsigned(g.below(100));
        if (any_tag_pair)
            m.mode = M_ANY_TAG;
        else if (md < 50)
            m.mode = M_EXACT;
        else if (!mux || md < 70)
            m.mode = M_ANY_SOURCE;
        else if (md < 88)
            m.mode = M_ANY_INDEX;
        else
            m.mode = M_ANY_BOTH;
        m.blocking = g.pct(10);
        m.key = hkey(opt.seed, D_PAYLOAD, dom, r, from.rank, from.thread, to.rank, to.thread, k);
    }
    return v;
}

}  // namespace

std::string exchange::msg_what(const ep &from, const ep &to, size_t k, const msg_desc &m) const {
    char b[400];
    std::snprintf(b, sizeof b,
                  "%s: message #%zu from rank %d%s to rank %d%s, tag %d, %zu x %s (%zu bytes, receive buffer %zu "
                  "elements, recv mode %s%s)",
                  name.c_str(), k, from.rank, mux ? (" stream " + std::to_string(from.thread)).c_str() : "",
                  to.rank, mux ? (" stream " + std::to_string(to.thread)).c_str() : "", m.tag, m.count, m.tname,
                  m.count * m.es, m.cap, mode_name[m.mode], m.blocking ? ", blocking send" : "");
    return b;
}

void exchange::post() {
    rng g(hkey(opt.seed, D_ORDER, dom, r, me.rank, me.thread));
    const size_t np = peers.size();
    const size_t rot_r = g.below(np), rot_s = g.below(np);
    for (size_t i = 0; i < np; ++i) {
        const ep from = peers[(i + rot_r) % np];
        auto plan = pair_plan(dom, r, from, me, mux);
        for (size_t k = 0; k < plan.size(); ++k) {
            recv_rec rr{from, k, plan[k], {}};
            const msg_desc &m = rr.m;
            rr.buf.resize(m.cap * m.es + GUARD);
            fill(hkey(m.key, D_CANARY), rr.buf.data(), rr.buf.size());
            int source = (m.mode == M_ANY_SOURCE || m.mode == M_ANY_BOTH) ? WEFT_ANY_SOURCE : from.rank;
            int tag = m.mode == M_ANY_TAG ? WEFT_ANY_TAG : m.tag;
            weft_request q = WEFT_REQUEST_NULL;
            int rc;
            if (mux) {
                int sidx = (m.mode == M_ANY_INDEX || m.mode == M_ANY_BOTH) ? WEFT_ANY_INDEX : from.thread;
                rc = weft_stream_irecv(rr.buf.data(), m.cap, m.type, source, tag, comm, sidx, me.thread, &q);
            } else {
                rc = weft_irecv(rr.buf.data(), m.cap, m.type, source, tag, comm, &q);
            }
            if (rc) fail("%s: posting the receive: %s", msg_what(from, me, k, m).c_str(), weft_err(rc).c_str());
            recvs.push_back(std::move(rr));
            reqs.push_back(q);
        }
    }
    for (size_t i = 0; i < np; ++i) {
        const ep to = peers[(i + rot_s) % np];
        auto plan = pair_plan(dom, r, me, to, mux);
        for (size_t k = 0; k < plan.size(); ++k) {
            send_rec sr{to, k, plan[k], {}};
            const msg_desc &m = sr.m;
            sr.buf.resize(m.count * m.es);
            fill(m.key, sr.buf.data(), sr.buf.size());
            bool blocking = m.blocking && !poll;
            weft_request q = WEFT_REQUEST_NULL;
            int rc;
            if (mux)
                rc = blocking ? weft_stream_send(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm, me.thread,
                                                 to.thread)
                              : weft_stream_isend(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm, me.thread,
                                                  to.thread, &q);
            else
                rc = blocking ? weft_send(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm)
                              : weft_isend(sr.buf.data(), m.count, m.type, to.rank, m.tag, comm, &q);
            if (rc)
                fail("%s: %s: %s", msg_what(me, to, k, m).c_str(), blocking ? "blocking send" : "isend",
                     weft_err(rc).c_str());
            T->st.v[S_MSGS_SENT]++;
            T->st.v[S_BYTES_SENT] += m.count * m.es;
            sends.push_back(std::move(sr));
            reqs.push_back(q);
        }
    }
}

void exchange::add_extra(weft_request q) {
    reqs.push_back(q);
    ++nextra;
}

void exchange::complete() {
    const size_t n = reqs.size();
    st.assign(n, weft_status{});
    for (auto &s : st) s.error = -12345, s.source = -12345, s.tag = -12345;
    if (n == 0) return;
    rng g(hkey(opt.seed, D_ORDER, dom, r, me.rank, me.thread, 1));
    unsigned method = unsigned(g.below(poll ? 2 : 4));
    const char *mname = poll ? (method == 0 ? "testall+stream_progress" : "test each+stream_progress")
                             : (method == 0   ? "waitall"
                                : method == 1 ? "waitany"
                                : method == 2 ? "wait each"
                                              : "test each");
    doing("round %u %s: completing %zu requests (%s)", r, name.c_str(), n, mname);
    auto in_status = [&](int rc, const char *fn) {
        if (rc == WEFT_ERR_IN_STATUS) {
            std::string e;
            for (size_t i = 0; i < n; ++i)
                if (st[i].error != WEFT_SUCCESS && st[i].error != -12345)
                    e += " request " + std::to_string(i) + ": " + weft_err(st[i].error) + ";";
            fail("%s: %s returned WEFT_ERR_IN_STATUS:%s", name.c_str(), fn, e.c_str());
        }
        if (rc) fail("%s: %s returned %s", name.c_str(), fn, weft_err(rc).c_str());
    };
    if (poll && method == 0) {
        int flag = 0;
        while (!flag) {
            in_status(weft_testall(n, reqs.data(), &flag, st.data()), "weft_testall");
            if (!flag) progress(*T);
        }
    } else if (method == 3 || (poll && method == 1)) {
        size_t left = 0;
        for (auto q : reqs) left += q != WEFT_REQUEST_NULL;
        while (left) {
            for (size_t i = 0; i < n; ++i) {
                if (reqs[i] == WEFT_REQUEST_NULL) continue;
                int flag = 0;
                int rc = weft_test(&reqs[i], &flag, &st[i]);
                if (rc) fail("%s: weft_test(request %zu) returned %s", name.c_str(), i, weft_err(rc).c_str());
                if (flag) --left;
            }
            if (left && poll) progress(*T);
        }
    } else if (method == 0) {
        in_status(weft_waitall(n, reqs.data(), st.data()), "weft_waitall");
    } else if (method == 1) {
        size_t active = 0;
        for (auto q : reqs) active += q != WEFT_REQUEST_NULL;
        for (size_t done = 0;; ++done) {
            size_t idx = 0;
            weft_status s{};
            int rc = weft_waitany(n, reqs.data(), &idx, &s);
            if (rc) fail("%s: weft_waitany returned %s", name.c_str(), weft_err(rc).c_str());
            if (idx == WEFT_UNDEFINED) {
                if (done != active)
                    fail("%s: weft_waitany reported all requests null after %zu of %zu", name.c_str(), done,
                         active);
                break;
            }
            if (idx >= n || done >= active)
                fail("%s: weft_waitany returned index %zu (call %zu of %zu)", name.c_str(), idx, done, n);
            st[idx] = s;
        }
    } else {
        std::vector<size_t> order(n);
        for (size_t i = 0; i < n; ++i) order[i] = i;
        for (size_t i = n; i > 1; --i) std::swap(order[i - 1], order[g.below(i)]);
        for (size_t i : order) {
            int rc = weft_wait(&reqs[i], &st[i]);
            if (rc) fail("%s: weft_wait(request %zu) returned %s", name.c_str(), i, weft_err(rc).c_str());
        }
    }
    for (size_t i = 0; i < n; ++i)
        if (reqs[i] != WEFT_REQUEST_NULL)
            fail("%s: request %zu is not null after completion (%s)", name.c_str(), i, mname);
}

void exchange::verify() {
    for (size_t i = 0; i < recvs.size(); ++i) {
        recv_rec &rr = recvs[i];
        const msg_desc &m = rr.m;
        const weft_status &s = st[i];
        std::string what = msg_what(rr.from, me, rr.k, m);
        if (s.error != WEFT_SUCCESS) fail("%s: status.error is %s", what.c_str(), weft_err(s.error).c_str());
        if (s.source != rr.from.rank) fail("%s: status.source is %d", what.c_str(), s.source);
        if (s.tag != m.tag) fail("%s: status.tag is %d", what.c_str(), s.tag);
        if (mux && s.stream_index != rr.from.thread)
            fail("%s: status.stream_index is %d", what.c_str(), s.stream_index);
        size_t count = SIZE_MAX - 1;
        int rc = weft_get_count(&s, m.type, &count);
        if (rc) fail("%s: weft_get_count returned %s", what.c_str(), weft_err(rc).c_str());
        if (count != m.count) fail("%s: weft_get_count gives %zu", what.c_str(), count);
        check_bytes(what + ": payload", m.key, rr.buf.data(), m.count * m.es);
        check_bytes(what + ": bytes past the message (receive buffer slack and guard) changed",
                    hkey(m.key, D_CANARY), rr.buf.data() + m.count * m.es, rr.buf.size() - m.count * m.es,
                    m.count * m.es);
        T->st.v[S_MSGS_RECV]++;
        T->st.v[S_BYTES_RECV] += m.count * m.es;
    }
    for (size_t i = 0; i < sends.size(); ++i) {
        const weft_status &s = st[recvs.size() + i];
        if (s.error != WEFT_SUCCESS && s.error != -12345)
            fail("%s: status.error of the send is %s", msg_what(me, sends[i].to, sends[i].k, sends[i].m).c_str(),
                 weft_err(s.error).c_str());
    }
}

// An exchange among the ranks of sc_t or cc_t (thread t everywhere).
exchange make_comm_exchange(thread_ctx &T, weft_comm comm, uint64_t dom, uint32_t r, bool poll, const char *name) {
    exchange ex;
    ex.T = &T;
    ex.comm = comm;
    ex.dom = dom;
    ex.r = r;
    ex.poll = poll;
    ex.name = std::string(name);
    ex.me = {g_rank, T.t};
    for (int p = 0; p < g_size; ++p) ex.peers.push_back({p, T.t});
    return ex;
}

void round_p2p(thread_ctx &T, uint32_t r, bool conv) {
    exchange ex = make_comm_exchange(
        T, conv ? T.cc : T.sc, conv ? D_P2P_CC : D_P2P_SC, r, conv && !opt.progress_threads,
        conv ? ("conv p2p on cc_" + std::to_string(T.t)).c_str() : ("p2p on sc_" + std::to_string(T.t)).c_str());
    ex.post();
    ex.complete();
    ex.verify();
}

}  // namespace soak

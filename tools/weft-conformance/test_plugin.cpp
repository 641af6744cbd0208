/* The plugin descriptor, init/finalize, capabilities and addresses. */
#include "fabric_harness.hpp"

#include <cstring>

namespace conformance {
namespace {

void require_plugin() {
    if (plugin().path.empty()) GTEST_SKIP() << plugin().error;
    ASSERT_TRUE(plugin().error.empty()) << plugin().error;
}

TEST(Plugin, DescriptorIsComplete) {
    require_plugin();
    if (IsSkipped()) return;
    const weft_plugin_v1_t &d = *plugin().desc;
    EXPECT_EQ(d.abi_major, static_cast<uint32_t>(WEFT_PLUGIN_ABI_MAJOR));
    EXPECT_LE(d.abi_minor, static_cast<uint32_t>(WEFT_PLUGIN_ABI_MINOR));
    ASSERT_NE(d.name, nullptr);
    EXPECT_GT(strlen(d.name), 0u);
    ASSERT_NE(d.version, nullptr);
    EXPECT_GT(strlen(d.version), 0u);
    const weft_fabric_ops_v1_t &o = *plugin().ops;
    for (auto [fn, what] : {std::pair<const void *, const char *>{(const void *)o.init, "init"},
                            {(const void *)o.finalize, "finalize"},
                            {(const void *)o.query, "query"},
                            {(const void *)o.ep_open, "ep_open"},
                            {(const void *)o.ep_close, "ep_close"},
                            {(const void *)o.ep_address, "ep_address"},
                            {(const void *)o.ep_connect, "ep_connect"},
                            {(const void *)o.ep_disconnect, "ep_disconnect"},
                            {(const void *)o.tag_send, "tag_send"},
                            {(const void *)o.tag_recv, "tag_recv"},
                            {(const void *)o.tag_probe, "tag_probe"},
                            {(const void *)o.cancel, "cancel"},
                            {(const void *)o.ep_progress, "ep_progress"}})
        EXPECT_NE(fn, nullptr) << "mandatory operation " << what << " is NULL";
    RecordProperty("plugin", d.name);
    RecordProperty("version", d.version);
    printf("plugin %s %s, priority %d\n", d.name, d.version, d.priority);
}

/* plugin.h: init may run again after finalize (weft-info opens each fabric twice, and this
 * kit opens one per test), never while a fabric of the plugin is open. */
TEST(Plugin, InitFinalizeRepeatedly) {
    require_plugin();
    if (IsSkipped()) return;
    for (int i = 0; i < 3; ++i) {
        weft_fabric_t *f = nullptr;
        char why[256] = "";
        int rc = plugin().ops->init(host(), &f, why, sizeof(why));
        if (rc != WEFT_PLUGIN_OK && i == 0) GTEST_SKIP() << "cannot open here: " << why;
        ASSERT_EQ(rc, WEFT_PLUGIN_OK) << "init #" << i + 1 << " after a finalize failed: " << why;
        ASSERT_NE(f, nullptr) << "init #" << i + 1;
        EXPECT_EQ(plugin().ops->finalize(f), WEFT_PLUGIN_OK) << "finalize #" << i + 1;
    }
}

using Caps = FabricTest;

TEST_F(Caps, QueryHonoursStructSize) {
    EXPECT_GT(caps_.max_message_size, 64u << 20) << "suite sends 64 MiB messages";
    EXPECT_GT(caps_.max_address_size, 0u);
    if (caps_.flags & WEFT_FABRIC_CAP_WAIT_FD) {
        EXPECT_NE(ops().ep_wait_fd, nullptr);
        EXPECT_NE(ops().ep_arm, nullptr);
    }
    /* An older core passes a shorter struct: nothing past struct_size may be written. */
    unsigned char buf[sizeof(weft_fabric_caps_t) + 16];
    memset(buf, 0xa5, sizeof(buf));
    weft_fabric_caps_t old{};
    old.struct_size = offsetof(weft_fabric_caps_t, eager_size);
    memcpy(buf, &old, sizeof(old.struct_size));
    ASSERT_EQ(ops().query(fabric_, reinterpret_cast<weft_fabric_caps_t *>(buf)), WEFT_PLUGIN_OK);
    for (size_t i = old.struct_size; i < sizeof(buf); ++i)
        ASSERT_EQ(buf[i], 0xa5) << "query wrote byte " << i << " past struct_size";
}

TEST_F(Caps, ContextSpaceAskedIsWithinTheMaximum) {
    if (plugin().desc->abi_minor < 7)
        GTEST_SKIP() << "ABI 1." << plugin().desc->abi_minor << ": caps.context_space came with 1.7";
    EXPECT_LE(caps_.context_space, static_cast<size_t>(WEFT_FABRIC_CONTEXT_SPACE_MAX))
        << "no core gives more than WEFT_FABRIC_CONTEXT_SPACE_MAX: keep the rest elsewhere";
    printf("context space: asks %zu bytes, offered %zu\n", caps_.context_space, context_space_);
}

TEST_F(Caps, AddressTooSmallReportsLength) {
    size_t len = 1;
    uint8_t one[1];
    int rc = ops().ep_address(a_.ep, one, &len);
    EXPECT_TRUE(rc == WEFT_PLUGIN_ERR_INVALID || rc == WEFT_PLUGIN_ERR_NOMEM)
        << "ep_address with a too-small buffer answered " << rc << ", not WEFT_PLUGIN_ERR_INVALID (or ERR_NOMEM)";
    EXPECT_EQ(len, a_.address.size()) << "a too-small buffer must report the needed length";
    len = a_.address.size();
    std::vector<uint8_t> again(len);
    ASSERT_EQ(ops().ep_address(a_.ep, again.data(), &len), WEFT_PLUGIN_OK);
    EXPECT_EQ(again, a_.address) << "an endpoint's address must be stable";
}

TEST_F(Caps, BadAddressIsRejected) {
    weft_fabric_peer_t *peer = nullptr;
    EXPECT_NE(ops().ep_connect(a_.ep, b_.address.data(), 0, &peer), WEFT_PLUGIN_OK);
    const uint8_t junk[4] = {1, 2, 3, 4};
    EXPECT_NE(ops().ep_connect(a_.ep, junk, sizeof(junk), &peer), WEFT_PLUGIN_OK);
}

}  // namespace
}  // namespace conformance

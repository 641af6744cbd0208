/* Deliberately broken (and two minimal working) plugins for the loader tests.  One source,
 * one variant per build: TEST_PLUGIN_VARIANT selects what is wrong with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/plugin.h"

#define VARIANT_NOSYM 1      /* exports no weft_plugin_v1 */
#define VARIANT_BADABI 2     /* abi_major 99 */
#define VARIANT_FAILINIT 3   /* init fails with a reason */
#define VARIANT_NOOPS 4      /* tag_send missing from the ops table */
#define VARIANT_UNRESOLVED 5 /* references a symbol nothing defines: dlopen fails */
#define VARIANT_OPENS 6      /* opens; priority from TEST_PLUGIN_PRIORITY */
#define VARIANT_QUEUE 7      /* a queue plugin: never selected as a fabric */
#define VARIANT_ASKS \
    8                     /* opens; asks for TEST_PLUGIN_CONTEXT_SPACE bytes of context space,
                                claiming ABI minor TEST_PLUGIN_ABI_MINOR */
#define VARIANT_SETTING 9 /* init refuses TEST_PLUGIN_SETTING=bogus (ERR_INVALID), else is unavailable */
#ifndef TEST_PLUGIN_ABI_MINOR
#define TEST_PLUGIN_ABI_MINOR WEFT_PLUGIN_ABI_MINOR
#endif

struct weft_fabric {
    int unused;
};
__attribute__((unused)) static struct weft_fabric the_fabric;

#if TEST_PLUGIN_VARIANT == VARIANT_UNRESOLVED
extern int weft_test_symbol_that_does_not_exist(void);
#endif

static int t_init(const weft_plugin_host_t *host, weft_fabric_t **fabric, char *why, size_t why_len) {
    (void)host;
#if TEST_PLUGIN_VARIANT == VARIANT_SETTING
    (void)fabric;
    const char *setting = getenv("TEST_PLUGIN_SETTING");
    if (setting != NULL && strcmp(setting, "bogus") == 0) {
        snprintf(why, why_len, "TEST_PLUGIN_SETTING='%s' is not valid: use 'good'", setting);
        return WEFT_PLUGIN_ERR_INVALID;
    }
    snprintf(why, why_len, "no device for this test");
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
#elif TEST_PLUGIN_VARIANT == VARIANT_FAILINIT
    (void)fabric;
    snprintf(why, why_len, "simulated failure: set WEFT_TEST_DEVICE to a device that exists");
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
#else
    (void)why;
    (void)why_len;
#if TEST_PLUGIN_VARIANT == VARIANT_UNRESOLVED
    if (weft_test_symbol_that_does_not_exist()) return WEFT_PLUGIN_ERR_OTHER;
#endif
    *fabric = &the_fabric;
    return WEFT_PLUGIN_OK;
#endif
}
static int t_finalize(weft_fabric_t *f) {
    (void)f;
    return WEFT_PLUGIN_OK;
}
static int t_query(weft_fabric_t *f, weft_fabric_caps_t *caps) {
    (void)f;
    caps->max_message_size = 1;
#if TEST_PLUGIN_VARIANT == VARIANT_ASKS
    /* Written whatever the minor claimed: the core must ignore it below minor 7. */
    if (caps->struct_size >= offsetof(weft_fabric_caps_t, context_space) + sizeof(size_t))
        caps->context_space = TEST_PLUGIN_CONTEXT_SPACE;
#endif
    return WEFT_PLUGIN_OK;
}
/* The loader tests never communicate: the remaining operations refuse. */
static int t_ep_open(weft_fabric_t *f, const weft_fabric_ep_attr_t *a, weft_fabric_ep_t **ep) {
    (void)f;
    (void)a;
    (void)ep;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_ep(weft_fabric_ep_t *ep) {
    (void)ep;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_addr(weft_fabric_ep_t *ep, void *b, size_t *l) {
    (void)ep;
    (void)b;
    (void)l;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_connect(weft_fabric_ep_t *ep, const void *a, size_t l, weft_fabric_peer_t **p) {
    (void)ep;
    (void)a;
    (void)l;
    (void)p;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_disconnect(weft_fabric_ep_t *ep, weft_fabric_peer_t *p) {
    (void)ep;
    (void)p;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
__attribute__((unused)) static int t_send(weft_fabric_ep_t *ep, weft_fabric_peer_t *p, const void *b, size_t l,
                                          uint64_t t, void *c) {
    (void)ep;
    (void)p;
    (void)b;
    (void)l;
    (void)t;
    (void)c;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_recv(weft_fabric_ep_t *ep, void *b, size_t l, uint64_t t, uint64_t i, void *c) {
    (void)ep;
    (void)b;
    (void)l;
    (void)t;
    (void)i;
    (void)c;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_probe(weft_fabric_ep_t *ep, uint64_t t, uint64_t i, int *f, uint64_t *mt, size_t *ml) {
    (void)ep;
    (void)t;
    (void)i;
    (void)f;
    (void)mt;
    (void)ml;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}
static int t_cancel(weft_fabric_ep_t *ep, void *c) {
    (void)ep;
    (void)c;
    return WEFT_PLUGIN_ERR_UNSUPPORTED;
}

__attribute__((unused)) /* the no-symbol variant exports nothing that uses it */
static const weft_fabric_ops_v1_t ops = {
    .init = t_init,
    .finalize = t_finalize,
    .query = t_query,
    .ep_open = t_ep_open,
    .ep_close = t_ep,
    .ep_address = t_addr,
    .ep_connect = t_connect,
    .ep_disconnect = t_disconnect,
#if TEST_PLUGIN_VARIANT == VARIANT_NOOPS
    .tag_send = NULL, /* the loader must refuse a table without a required op */
#else
    .tag_send = t_send,
#endif
    .tag_recv = t_recv,
    .tag_probe = t_probe,
    .cancel = t_cancel,
    .ep_progress = t_ep,
};

#if TEST_PLUGIN_VARIANT != VARIANT_NOSYM
__attribute__((visibility("default"))) const weft_plugin_v1_t weft_plugin_v1 = {
#if TEST_PLUGIN_VARIANT == VARIANT_BADABI
    99,
#else
    WEFT_PLUGIN_ABI_MAJOR,
#endif
    TEST_PLUGIN_ABI_MINOR,
#if TEST_PLUGIN_VARIANT == VARIANT_QUEUE
    WEFT_PLUGIN_KIND_QUEUE,
#else
    WEFT_PLUGIN_KIND_FABRIC,
#endif
    TEST_PLUGIN_NAME,
    "test",
    TEST_PLUGIN_PRIORITY,
    &ops};
#else
__attribute__((visibility("default"))) int weft_plugin_v2_not_this = 1;
#endif

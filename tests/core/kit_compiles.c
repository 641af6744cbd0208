/* The plugin kit compiles alone, warning-free, as C99, C11 and C++ (tests/core/CMakeLists.txt
 * builds this file in each mode with -Werror): every piece a plugin author may use, once. */
#include <weft/plugin_kit.h>

typedef struct item {
    int value;
    weft_kit_link_t link;
} item;

int weft_kit_compiles(const weft_plugin_host_t *host);
int weft_kit_compiles(const weft_plugin_host_t *host) {
    weft_kit_list_t list = WEFT_KIT_LIST_INITIALIZER(list);
    item a, b;
    a.value = 1;
    b.value = 2;
    weft_kit_list_push_back(&list, &a.link);
    weft_kit_list_push_front(&list, &b.link);
    int sum = 0;
    WEFT_KIT_LIST_FOREACH(l, &list) sum += WEFT_KIT_CONTAINER_OF(l, item, link)->value;
    weft_kit_list_unlink(&a.link);
    unsigned char buf[8];
    weft_kit_store_le32(buf, 7u);
    weft_kit_log_debug(host, "kit", "sum %d, word %u", sum, (unsigned)weft_kit_load_le32(buf));
    return sum + (weft_kit_list_empty(&list) ? 0 : 1) + (weft_kit_tag_matches(1, 1, 0) ? 1 : 0);
}

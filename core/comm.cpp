#include "comm.hpp"

#include <memory>

#include "error.hpp"
#include "handle.hpp"
#include "runtime.hpp"

namespace weft {
namespace {
handle_table<comm> &comms() {
    static handle_table<comm> table(handle_kind::comm, 16);
    return table;
}
}  // namespace

comm *comm_get(weft_comm handle) { return comms().get(handle); }

void comm_init_predefined(int world_rank, int world_size, vci *endpoint) {
    auto world = std::make_shared<comm>();
    world->context_id = 0;
    world->rank = world_rank;
    world->size = world_size;
    world->world_ranks.resize(static_cast<size_t>(world_size));
    for (int i = 0; i < world_size; ++i) world->world_ranks[static_cast<size_t>(i)] = i;
    world->endpoint = endpoint;
    comms().put_predefined(handle_slot(WEFT_COMM_WORLD), world);

    auto self = std::make_shared<comm>();
    self->context_id = 2;
    self->rank = 0;
    self->size = 1;
    self->world_ranks = {world_rank};
    self->endpoint = endpoint;
    comms().put_predefined(handle_slot(WEFT_COMM_SELF), self);
}

void comm_finalize_all() { comms().clear(); }

}  // namespace weft

using namespace weft;

extern "C" int weft_comm_rank(weft_comm handle, int *rank) {
    if (int rc = runtime_check("weft_comm_rank")) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "weft_comm_rank: invalid communicator handle 0x%x", handle);
    if (rank == nullptr) return fail(WEFT_ERR_ARG, "weft_comm_rank: rank must not be NULL");
    *rank = c->rank;
    return WEFT_SUCCESS;
}

extern "C" int weft_comm_size(weft_comm handle, int *size) {
    if (int rc = runtime_check("weft_comm_size")) return rc;
    comm *c = comm_get(handle);
    if (c == nullptr) return fail(WEFT_ERR_COMM, "weft_comm_size: invalid communicator handle 0x%x", handle);
    if (size == nullptr) return fail(WEFT_ERR_ARG, "weft_comm_size: size must not be NULL");
    *size = c->size;
    return WEFT_SUCCESS;
}

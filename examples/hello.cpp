// hello (C++): rank 0 sends a vector to every other rank, which sends back its sum.
// Run: weftrun -n 3 weft-hello-cxx
#include <cstdio>
#include <numeric>
#include <vector>

#include <weft/weft.hpp>

int main(int argc, char **argv) {
    try {
        weft::Environment env(argc, argv);
        auto world = weft::Comm::world();
        int rank = world.rank(), size = world.size();
        if (rank == 0) {
            std::vector<double> data(1000);
            std::iota(data.begin(), data.end(), 1.0);
            for (int peer = 1; peer < size; ++peer) world.send(std::span(data), peer, 0);
            for (int peer = 1; peer < size; ++peer) {
                double sum = 0;
                weft::Status st = world.recv(std::span(&sum, 1), WEFT_ANY_SOURCE, 1);
                std::printf("rank %d summed %.0f\n", st.source(), sum);
            }
        } else {
            std::vector<double> data(1000);
            world.recv(std::span(data), 0, 0);
            double sum = std::accumulate(data.begin(), data.end(), 0.0);
            world.send(std::span(&sum, 1), 0, 1);
        }
    } catch (const weft::error &e) {
        std::fprintf(stderr, "weft-hello-cxx: %s\n", e.what());
        return 1;
    }
    return 0;
}

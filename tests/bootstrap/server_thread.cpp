#include "server_thread.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <stdexcept>

server_thread::server_thread(int nranks, std::string token, std::chrono::milliseconds hello_timeout, bool keep_going) {
    server_.set_hello_timeout(hello_timeout);
    server_.set_keep_going(keep_going);
    std::string why;
    if (!server_.open(nranks, std::move(token), "127.0.0.1", why)) throw std::runtime_error(why);
    if (::pipe2(stop_, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2");
    server_.set_log([this](const std::string &m) {
        std::lock_guard<std::mutex> g(mu_);
        log_.push_back(m);
    });
    thread_ = std::thread([this] { loop(); });
}

server_thread::~server_thread() {
    char c = 'q';
    (void)!::write(stop_[1], &c, 1);
    thread_.join();
    ::close(stop_[0]);
    ::close(stop_[1]);
}

std::vector<std::string> server_thread::log() const {
    std::lock_guard<std::mutex> g(mu_);
    return log_;
}

std::vector<weftrun::failure_report> server_thread::reports() const {
    std::lock_guard<std::mutex> g(mu_);
    return reports_;
}

void server_thread::rank_exited(int rank) {
    std::lock_guard<std::mutex> g(mu_);
    exited_.push_back(rank);
    char c = 'x';
    (void)!::write(stop_[1], &c, 1);
}

void server_thread::loop() {
    std::vector<pollfd> fds;
    for (;;) {
        fds.clear();
        fds.push_back({stop_[0], POLLIN, 0});
        server_.add_pollfds(fds);
        int n = ::poll(fds.data(), fds.size(), server_.timeout_ms());
        if (n < 0) continue;
        if (fds[0].revents & POLLIN) {
            char c;
            bool quit = false;
            while (::read(stop_[0], &c, 1) == 1) quit |= c == 'q';
            if (quit) return;
            std::vector<int> exited;
            {
                std::lock_guard<std::mutex> g(mu_);
                exited.swap(exited_);
            }
            for (int r : exited) server_.rank_exited(r);
        }
        server_.process(fds, 1);
        while (auto f = server_.take_failure_report()) {
            std::lock_guard<std::mutex> g(mu_);
            reports_.push_back(std::move(*f));
        }
    }
}

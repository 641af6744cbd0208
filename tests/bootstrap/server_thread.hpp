// Runs weftrun's key-value server on a thread of the test process, so that tests can talk to
// it through real sockets (raw frames or the weftrun bootstrap client).
#pragma once
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kvs_server.hpp"

class server_thread {
  public:
    server_thread(int nranks, std::string token, std::chrono::milliseconds hello_timeout = std::chrono::seconds(30),
                  bool keep_going = false);
    ~server_thread();
    uint16_t port() const { return server_.port(); }
    // Lines the server logged (refusals, protocol errors).
    std::vector<std::string> log() const;
    // Tells the server that the launcher saw `rank` exit.
    void rank_exited(int rank);
    // The failure reports the server has handed out so far.
    std::vector<weftrun::failure_report> reports() const;

  private:
    void loop();

    weftrun::kvs_server server_;
    int stop_[2] = {-1, -1};
    mutable std::mutex mu_;
    std::vector<std::string> log_;
    std::vector<int> exited_;
    std::vector<weftrun::failure_report> reports_;
    std::thread thread_;
};

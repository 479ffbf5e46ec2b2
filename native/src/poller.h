// One thread per addon that waits for file descriptors (completion channels, async event
// fds) to become readable, so nothing blocks the JS thread or holds a libuv pool thread.
// Readiness and deadlines come back to the JS thread through a ThreadSafeFunction; the
// actual read (ibv_get_cq_event, ibv_get_async_event) happens there.
#pragma once

#include <napi.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

class Poller {
 public:
  // Called on the JS thread: `ready` false means the deadline passed first.
  using Callback = std::function<void(Napi::Env env, bool ready)>;

  Poller() = default;
  ~Poller();
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  void Start(Napi::Env env);
  void Stop();
  // Watches `fd` until readable or `timeoutMs` (< 0: forever). Returns an id for Cancel.
  uint64_t Watch(Napi::Env env, int fd, double timeoutMs, Callback cb);
  // The callback will not run. Safe to call before closing the fd.
  void Cancel(Napi::Env env, uint64_t id);

 private:
  struct Watched {
    int fd;
    int64_t deadlineUs;  // INT64_MAX: none
  };
  struct Fired {
    uint64_t id;
    bool ready;
  };
  void Run();
  void Wake();
  static void Deliver(Napi::Env env, Napi::Function, Poller* self, std::vector<Fired>* fired);
  void Settle(Napi::Env env, uint64_t id, bool ready);

  using Tsfn = Napi::TypedThreadSafeFunction<Poller, std::vector<Fired>, &Poller::Deliver>;
  Tsfn tsfn_;
  bool started_ = false;
  // False once Node has finalized the TSFN (environment teardown): no more calls on it.
  bool tsfnAlive_ = false;
  bool refed_ = false;
  void OnTsfnFinalized();
  std::thread thread_;
  int wakeFd_ = -1;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::map<uint64_t, Watched> watched_;     // guarded by mu_
  std::map<uint64_t, Callback> callbacks_;  // JS thread only
  uint64_t nextId_ = 1;
};

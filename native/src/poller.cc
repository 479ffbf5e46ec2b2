#include "poller.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <vector>

namespace {
int64_t NowUs() {
  using namespace std::chrono;
  return duration_cast<microseconds>(steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Poller::~Poller() { Stop(); }

void Poller::Start(Napi::Env env) {
  wakeFd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  tsfn_ =
      Tsfn::New(env, "verbslab-poller", 0, 1, this, [](Napi::Env, void*, Poller* self) { self->OnTsfnFinalized(); });
  tsfnAlive_ = true;
  // Only pending waits keep the process alive.
  tsfn_.Unref(env);
  started_ = true;
  thread_ = std::thread([this] { Run(); });
}

void Poller::Stop() {
  if (!started_) return;
  started_ = false;
  stop_ = true;
  Wake();
  if (thread_.joinable()) thread_.join();
  if (tsfnAlive_) tsfn_.Release();
  tsfnAlive_ = false;
  if (wakeFd_ >= 0) close(wakeFd_);
  wakeFd_ = -1;
}

// At environment teardown Node closes the TSFN before addon finalizers run: stop the
// thread now (it would otherwise call into a deleted TSFN) and stop Ref/Unref.
void Poller::OnTsfnFinalized() {
  tsfnAlive_ = false;
  stop_ = true;
  Wake();
  if (thread_.joinable()) thread_.join();
}

void Poller::Wake() {
  uint64_t one = 1;
  if (wakeFd_ >= 0) (void)!write(wakeFd_, &one, sizeof one);
}

uint64_t Poller::Watch(Napi::Env env, int fd, double timeoutMs, Callback cb) {
  uint64_t id = nextId_++;
  int64_t deadline = INT64_MAX;
  if (timeoutMs >= 0 && std::isfinite(timeoutMs)) deadline = NowUs() + static_cast<int64_t>(timeoutMs * 1000.0);
  callbacks_.emplace(id, std::move(cb));
  if (!refed_ && tsfnAlive_) {
    tsfn_.Ref(env);
    refed_ = true;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    watched_[id] = Watched{fd, deadline};
  }
  Wake();
  return id;
}

void Poller::Cancel(Napi::Env env, uint64_t id) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    watched_.erase(id);
  }
  callbacks_.erase(id);
  if (callbacks_.empty() && refed_ && tsfnAlive_) {
    tsfn_.Unref(env);
    refed_ = false;
  }
  Wake();
}

void Poller::Settle(Napi::Env env, uint64_t id, bool ready) {
  auto it = callbacks_.find(id);
  if (it == callbacks_.end()) return;  // cancelled meanwhile
  Callback cb = std::move(it->second);
  callbacks_.erase(it);
  if (callbacks_.empty() && refed_ && tsfnAlive_) {
    tsfn_.Unref(env);
    refed_ = false;
  }
  cb(env, ready);
}

void Poller::Deliver(Napi::Env env, Napi::Function, Poller* self, std::vector<Fired>* fired) {
  if (env != nullptr) {
    for (const Fired& f : *fired) {
      try {
        self->Settle(env, f.id, f.ready);
      } catch (const Napi::Error& e) {
        // A callback's exception has nowhere to go: report it rather than lose it.
        e.ThrowAsJavaScriptException();
        break;
      }
    }
  }
  delete fired;
}

void Poller::Run() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;
  while (!stop_) {
    fds.clear();
    ids.clear();
    fds.push_back(pollfd{wakeFd_, POLLIN, 0});
    int64_t next = INT64_MAX;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const auto& [id, w] : watched_) {
        fds.push_back(pollfd{w.fd, POLLIN, 0});
        ids.push_back(id);
        if (w.deadlineUs < next) next = w.deadlineUs;
      }
    }
    int timeout = -1;
    if (next != INT64_MAX) {
      int64_t left = next - NowUs();
      timeout = left <= 0 ? 0 : static_cast<int>(std::min<int64_t>((left + 999) / 1000, INT_MAX));
    }
    int n = poll(fds.data(), fds.size(), timeout);
    if (stop_) break;
    if (n < 0) continue;  // EINTR
    if (fds[0].revents & POLLIN) {
      uint64_t drain;
      (void)!read(wakeFd_, &drain, sizeof drain);
    }
    auto* fired = new std::vector<Fired>();
    int64_t now = NowUs();
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t i = 0; i < ids.size(); i++) {
        auto it = watched_.find(ids[i]);
        if (it == watched_.end()) continue;  // cancelled while polling
        bool ready = fds[i + 1].revents != 0;
        if (ready || it->second.deadlineUs <= now) {
          fired->push_back(Fired{ids[i], ready});
          watched_.erase(it);
        }
      }
    }
    if (fired->empty() || tsfn_.NonBlockingCall(fired) != napi_ok) delete fired;
  }
}

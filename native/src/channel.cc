// CompletionChannel (struct ibv_comp_channel).
#include <fcntl.h>

#include <cerrno>
#include <cmath>

#include "objects.h"

Napi::Function CompletionChannel::Define(Napi::Env env) {
  return DefineVerbsClass<CompletionChannel>(
      env, "CompletionChannel",
      {
          {"getCqEvent", "ibv_get_cq_event", Method<CompletionChannel, &CompletionChannel::GetCqEvent>},
          {"destroy", "ibv_destroy_comp_channel", Method<CompletionChannel, &CompletionChannel::Destroy>},
      });
}

CompletionChannel::CompletionChannel(const Napi::CallbackInfo& info)
    : Napi::ObjectWrap<CompletionChannel>(info), env_(info.Env()) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "CompletionChannel objects come from createCompChannel()");
  TagWrap(this, info);
}

void CompletionChannel::Attach(Context* ctx, Napi::Object ctxJs, ibv_comp_channel* ch) {
  ch_ = ch;
  context_ = ctx;
  // Reads happen on the JS thread only after the poller saw the fd readable; non-blocking
  // so that a read racing another reader returns EAGAIN instead of blocking JS.
  int flags = fcntl(ch_->fd, F_GETFL);
  if (flags >= 0) fcntl(ch_->fd, F_SETFL, flags | O_NONBLOCK);
  DependOn(ctx, ctxJs);
}

int CompletionChannel::Release(bool force) {
  int err = ErrnoOf(ibv_destroy_comp_channel(ch_));
  if (err != 0) return err;
  ch_ = nullptr;
  waits_.CancelAll(env_);  // pending getCqEvent calls resolve with null
  return 0;
}

Napi::Value CompletionChannel::Destroy(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Resource::Destroy(), "a CQ is still attached to this channel");
}

// getCqEvent(timeoutMs?) → Promise<CompletionQueue | null>
Napi::Value CompletionChannel::GetCqEvent(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  double timeout = -1;
  if (!info[0].IsUndefined() && !info[0].IsNull()) {
    if (!info[0].IsNumber()) ThrowType(env, std::string(verb) + ": timeoutMs must be a number");
    timeout = info[0].As<Napi::Number>().DoubleValue();
    if (std::isnan(timeout) || timeout < 0) ThrowType(env, std::string(verb) + ": timeoutMs must be ≥ 0");
    if (std::isinf(timeout)) timeout = -1;
  }
  return waits_.Wait(env, Value(), ch_->fd, timeout,
                     [this](Napi::Env env, Napi::Value* out) { return ReadEvent(env, out); });
}

bool CompletionChannel::ReadEvent(Napi::Env env, Napi::Value* out) {
  if (destroyed()) {
    *out = env.Null();
    return true;
  }
  ibv_cq* cq = nullptr;
  void* cqContext = nullptr;
  if (ibv_get_cq_event(ch_, &cq, &cqContext) != 0) return false;  // EAGAIN: not yet
  auto* wrap = static_cast<CompletionQueue*>(cqContext);
  wrap->EventRead();
  *out = wrap->Value();
  return true;
}

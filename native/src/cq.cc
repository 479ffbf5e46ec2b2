// CompletionQueue (struct ibv_cq).
#include <algorithm>
#include <cerrno>
#include <cmath>

#include "objects.h"

Napi::Function CompletionQueue::Define(Napi::Env env) {
  return DefineVerbsClass<CompletionQueue>(
      env, "CompletionQueue",
      {
          {"poll", "ibv_poll_cq", Method<CompletionQueue, &CompletionQueue::Poll>},
          {"bindPollOut", "ibv_poll_cq", Method<CompletionQueue, &CompletionQueue::BindPollOut>},
          {"reqNotify", "ibv_req_notify_cq", Method<CompletionQueue, &CompletionQueue::ReqNotify>},
          {"ackEvents", "ibv_ack_cq_events", Method<CompletionQueue, &CompletionQueue::AckEvents>},
          {"destroy", "ibv_destroy_cq", Method<CompletionQueue, &CompletionQueue::Destroy>},
      });
}

CompletionQueue::CompletionQueue(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CompletionQueue>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "CompletionQueue objects come from createCq()");
  TagWrap(this, info);
}

void CompletionQueue::Attach(Context* ctx, Napi::Object ctxJs, CompletionChannel* ch, Napi::Object chJs, ibv_cq* cq) {
  cq_ = cq;
  context_ = ctx;
  DependOn(ctx, ctxJs);
  if (ch != nullptr) DependOn(ch, chJs);
  Value().Set("cqe", Napi::Number::New(ctxJs.Env(), cq->cqe));
}

int CompletionQueue::Release(bool force) {
  if (cq_ == nullptr) return 0;  // ibv_create_cq failed: nothing was created
  // ibv_destroy_cq waits (forever) until every event read from the channel has been
  // acknowledged. A JS program must not hang here: acknowledge what is left first.
  if (eventsRead_ > eventsAcked_) {
    ibv_ack_cq_events(cq_, static_cast<unsigned int>(eventsRead_ - eventsAcked_));
    eventsAcked_ = eventsRead_;
  }
  int err = ErrnoOf(ibv_destroy_cq(cq_));
  if (err == 0) cq_ = nullptr;
  return err;
}

Napi::Value CompletionQueue::Destroy(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Resource::Destroy(), "a QP still uses this CQ");
}

// poll(num_entries, out: Uint32Array) → count. Completion i fills out[i*14 ...]: wr_id low,
// wr_id high, status, opcode, vendor_err, byte_len, imm_data, qp_num, src_qp, wc_flags,
// pkey_index, slid, sl, dlid_path_bits. (A flat array: no object per completion here.)
Napi::Value CompletionQueue::Poll(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  int n = NumEntries(env, verb, info[0]);
  size_t length = 0;
  uint32_t* out = OutArray(env, verb, info[1], &length);
  return Napi::Number::New(env, Fill(env, verb, n, out, length));
}

// `out`'s elements (one napi_get_typedarray_info instead of a call per property), or a
// TypeError unless it is a Uint32Array.
uint32_t* CompletionQueue::OutArray(Napi::Env env, const char* verb, napi_value out, size_t* length) {
  napi_typedarray_type type = napi_int8_array;
  void* data = nullptr;
  if (napi_get_typedarray_info(env, out, &type, length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_uint32_array) {
    ThrowType(env, std::string(verb) + ": out must be a Uint32Array");
  }
  return static_cast<uint32_t*>(data);
}

// bindPollOut(out: Uint32Array) → poll(num_entries) → count: binds the array that the returned
// function fills, as poll(num_entries, out) does, without reading an array (or `this`) on
// every call (poll is the hot loop; see BoundVerb). Every such function polls into the array
// bound last. Referenced until another is bound or the CQ is freed. Like a registered MR's
// buffer, it must not be transferred (detached) while bound; native/index.ts binds a private
// array of its own.
Napi::Value CompletionQueue::BindPollOut(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  size_t length = 0;
  uint32_t* out = OutArray(env, verb, info[0], &length);  // throws before anything changes
  pollOut_ = Napi::Persistent(info[0].As<Napi::Object>());
  pollOutData_ = out;
  pollOutLength_ = length;
  return BindVerb<CompletionQueue, &CompletionQueue::PollBound>(env, this, "poll", "ibv_poll_cq");
}

// The function bindPollOut returns: poll into the array it bound (never null then).
Napi::Value CompletionQueue::PollBound(Napi::Env env, const char* verb, napi_value numEntries) {
  int n = NumEntries(env, verb, numEntries);
  // An int32, not Napi::Number's double: no floating point (emulated in the lab VM).
  napi_value count = nullptr;
  NAPI_THROW_IF_FAILED(env, napi_create_int32(env, Fill(env, verb, n, pollOutData_, pollOutLength_), &count),
                       Napi::Value());
  return Napi::Value(env, count);
}

// num_entries: a plain non-negative integer is read directly; anything else goes through Arg
// for its error.
int CompletionQueue::NumEntries(Napi::Env env, const char* verb, napi_value v) {
  double d = -1;
  uint64_t whole = 0;
  if (napi_get_value_double(env, v, &d) == napi_ok && WholeNumber(d, INT32_MAX + 1.0, &whole)) {
    return static_cast<int>(whole);
  }
  int n = Arg{env, verb}.I32(Napi::Value(env, v), "num_entries");
  if (n < 0) ThrowVerbs(env, verb, EINVAL, "num_entries must be ≥ 0", "num_entries");
  return n;
}

// Polls up to n completions (as many as fit in `length` words) into `o`; returns how many.
int CompletionQueue::Fill(Napi::Env env, const char* verb, int n, uint32_t* o, size_t length) {
  size_t room = length / kWcWords;
  size_t want = std::min<size_t>(static_cast<size_t>(n), room);
  if (want == 0) return 0;
  if (wcs_.size() < want) wcs_.resize(want);
  int got = ibv_poll_cq(cq_, static_cast<int>(want), wcs_.data());
  if (got < 0) ThrowVerbs(env, verb, ErrnoOf(got));
  for (int i = 0; i < got; i++) {
    const ibv_wc& w = wcs_[i];
    uint32_t* r = o + static_cast<size_t>(i) * kWcWords;
    r[0] = static_cast<uint32_t>(w.wr_id);
    r[1] = static_cast<uint32_t>(w.wr_id >> 32);
    r[2] = w.status;
    r[3] = w.opcode;
    r[4] = w.vendor_err;
    r[5] = w.byte_len;
    r[6] = w.imm_data;  // raw, exactly as the sender posted it
    r[7] = w.qp_num;
    r[8] = w.src_qp;
    r[9] = w.wc_flags;
    r[10] = w.pkey_index;
    r[11] = w.slid;
    r[12] = w.sl;
    r[13] = w.dlid_path_bits;
  }
  return got;
}

Napi::Value CompletionQueue::ReqNotify(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  int solicited =
      info[0].IsBoolean() ? info[0].As<Napi::Boolean>().Value() : Arg{env, verb}.I32(info[0], "solicited_only", true);
  int err = ibv_req_notify_cq(cq_, solicited);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err));
  return env.Undefined();
}

// ibv_ack_cq_events. Acknowledging more events than were read would leave ibv_destroy_cq
// waiting forever, so that is refused.
Napi::Value CompletionQueue::AckEvents(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  uint32_t n = Arg{env, verb}.U32(info[0], "nevents");
  uint64_t unacked = eventsRead_ - eventsAcked_;
  if (n > unacked) {
    ThrowVerbs(env, verb, EINVAL,
               "only " + std::to_string(unacked) + " event(s) were read and not yet acknowledged; acknowledging " +
                   std::to_string(n) + " would make ibv_destroy_cq wait forever",
               "nevents");
  }
  if (n > 0) ibv_ack_cq_events(cq_, n);
  eventsAcked_ += n;
  return env.Undefined();
}

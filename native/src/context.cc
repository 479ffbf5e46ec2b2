// Context (struct ibv_context) and FdWaits, the event waiting it shares with channels.
#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <cmath>

#include "objects.h"

namespace {
double NowMs() {
  using namespace std::chrono;
  return duration_cast<duration<double, std::milli>>(steady_clock::now().time_since_epoch()).count();
}

void SetNonBlocking(int fd) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// A timeout argument: undefined → wait forever (-1); otherwise milliseconds ≥ 0.
double TimeoutArg(Napi::Env env, const char* verb, Napi::Value v) {
  if (v.IsUndefined() || v.IsNull()) return -1;
  if (!v.IsNumber()) ThrowType(env, std::string(verb) + ": timeoutMs must be a number");
  double ms = v.As<Napi::Number>().DoubleValue();
  if (std::isnan(ms) || ms < 0) ThrowType(env, std::string(verb) + ": timeoutMs must be ≥ 0");
  return std::isinf(ms) ? -1 : ms;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// FdWaits

Napi::Value FdWaits::Wait(Napi::Env env, Napi::Object owner, int fd, double timeoutMs, Reader read) {
  Napi::Promise::Deferred deferred = Napi::Promise::Deferred::New(env);
  Napi::Value event;
  if (read(env, &event)) {
    deferred.Resolve(event);
    return deferred.Promise();
  }
  if (timeoutMs == 0) {
    deferred.Resolve(env.Null());
    return deferred.Promise();
  }
  uint64_t key = nextKey_++;
  pending_.emplace(key, Pending{deferred, Napi::Persistent(owner), fd, timeoutMs < 0 ? -1 : NowMs() + timeoutMs,
                                std::move(read), 0});
  Arm(env, key);
  return deferred.Promise();
}

void FdWaits::Arm(Napi::Env env, uint64_t key) {
  Pending& p = pending_.at(key);
  double left = p.deadlineMs < 0 ? -1 : std::max(0.0, p.deadlineMs - NowMs());
  p.watchId =
      AddonOf(env)->poller.Watch(env, p.fd, left, [this, key](Napi::Env env, bool ready) { Fire(env, key, ready); });
}

void FdWaits::Fire(Napi::Env env, uint64_t key, bool ready) {
  auto it = pending_.find(key);
  if (it == pending_.end()) return;
  Napi::Value event;
  if (ready && it->second.read(env, &event)) {
    Napi::Promise::Deferred d = it->second.deferred;
    pending_.erase(it);
    d.Resolve(event);
    return;
  }
  if (it->second.deadlineMs >= 0 && NowMs() >= it->second.deadlineMs) {
    Napi::Promise::Deferred d = it->second.deferred;
    pending_.erase(it);
    d.Resolve(env.Null());
    return;
  }
  Arm(env, key);  // woken, but another reader took the event: keep waiting
}

void FdWaits::CancelAll(Napi::Env env) {
  std::map<uint64_t, Pending> pending;
  pending.swap(pending_);
  for (auto& [key, p] : pending) {
    AddonOf(env)->poller.Cancel(env, p.watchId);
    try {
      p.deferred.Resolve(env.Null());
    } catch (const Napi::Error&) {
      // Environment teardown: nobody is left to see the promise.
    }
  }
}

// ---------------------------------------------------------------------------------------
// Context

Napi::Function Context::Define(Napi::Env env) {
  return DefineVerbsClass<Context>(
      env, "Context",
      {
          {"queryDevice", "ibv_query_device", Method<Context, &Context::QueryDevice>},
          {"queryPort", "ibv_query_port", Method<Context, &Context::QueryPort>},
          {"queryGid", "ibv_query_gid", Method<Context, &Context::QueryGid>},
          {"queryGidEx", "ibv_query_gid_ex", Method<Context, &Context::QueryGidEx>},
          {"queryGidTable", "ibv_query_gid_table", Method<Context, &Context::QueryGidTable>},
          {"queryPkey", "ibv_query_pkey", Method<Context, &Context::QueryPkey>},
          {"queryCounters", "RDMA_NLDEV_CMD_STAT_GET", Method<Context, &Context::QueryCounters>},
          {"allocPd", "ibv_alloc_pd", Method<Context, &Context::AllocPd>},
          {"createCq", "ibv_create_cq", Method<Context, &Context::CreateCq>},
          {"createCompChannel", "ibv_create_comp_channel", Method<Context, &Context::CreateCompChannel>},
          {"getAsyncEvent", "ibv_get_async_event", Method<Context, &Context::GetAsyncEvent>},
          {"close", "ibv_close_device", Method<Context, &Context::Close>},
      });
}

Context::Context(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Context>(info), env_(info.Env()) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "Context objects come from openDevice()");
  TagWrap(this, info);
}

void Context::Attach(ibv_context* ctx) {
  ctx_ = ctx;
  SetNonBlocking(ctx_->async_fd);
}

void Context::AttachBorrowed(ibv_context* ctx) {
  borrowed_ = true;
  Attach(ctx);
}

int Context::Release(bool force) {
  // Everything opened on this device is already gone (ForceDestroy takes dependents first).
  asyncWaits_.CancelAll(env_);
  if (borrowed_) {
    ctx_ = nullptr;  // librdmacm's: it stays open for librdmacm's other ids
    return 0;
  }
  int err = ibv_close_device(ctx_);
  ctx_ = nullptr;
  return ErrnoOf(err);
}

// ibv_close_device succeeds with resources open: the kernel frees them all. Here they are
// destroyed first, child-first, so every JS object left over reports "already destroyed".
Napi::Value Context::Close(const Napi::CallbackInfo& info, const char* verb) {
  if (borrowed_) {
    ThrowVerbs(info.Env(), verb, EINVAL,
               "this is librdmacm's context (rdma_cm_id.verbs): librdmacm closes it, a program never does", "context");
  }
  ForceDestroy();
  return info.Env().Undefined();
}

Napi::Value Context::QueryDevice(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  ibv_device_attr a;
  memset(&a, 0, sizeof a);
  int err = ibv_query_device(ctx_, &a);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err));
  Napi::Object o = Napi::Object::New(env);
  auto num = [&](const char* k, double v) { o.Set(k, Napi::Number::New(env, v)); };
  o.Set("fw_ver", a.fw_ver);
  o.Set("node_guid", GuidText(a.node_guid));
  o.Set("sys_image_guid", GuidText(a.sys_image_guid));
  o.Set("max_mr_size", Napi::BigInt::New(env, static_cast<uint64_t>(a.max_mr_size)));
  o.Set("page_size_cap", Napi::BigInt::New(env, static_cast<uint64_t>(a.page_size_cap)));
  num("vendor_id", a.vendor_id);
  num("vendor_part_id", a.vendor_part_id);
  num("hw_ver", a.hw_ver);
  num("max_qp", a.max_qp);
  num("max_qp_wr", a.max_qp_wr);
  num("device_cap_flags", a.device_cap_flags);
  num("max_sge", a.max_sge);
  num("max_sge_rd", a.max_sge_rd);
  num("max_cq", a.max_cq);
  num("max_cqe", a.max_cqe);
  num("max_mr", a.max_mr);
  num("max_pd", a.max_pd);
  num("max_qp_rd_atom", a.max_qp_rd_atom);
  num("max_ee_rd_atom", a.max_ee_rd_atom);
  num("max_res_rd_atom", a.max_res_rd_atom);
  num("max_qp_init_rd_atom", a.max_qp_init_rd_atom);
  num("max_ee_init_rd_atom", a.max_ee_init_rd_atom);
  num("atomic_cap", a.atomic_cap);
  num("max_ee", a.max_ee);
  num("max_rdd", a.max_rdd);
  num("max_mw", a.max_mw);
  num("max_raw_ipv6_qp", a.max_raw_ipv6_qp);
  num("max_raw_ethy_qp", a.max_raw_ethy_qp);
  num("max_mcast_grp", a.max_mcast_grp);
  num("max_mcast_qp_attach", a.max_mcast_qp_attach);
  num("max_total_mcast_qp_attach", a.max_total_mcast_qp_attach);
  num("max_ah", a.max_ah);
  num("max_fmr", a.max_fmr);
  num("max_map_per_fmr", a.max_map_per_fmr);
  num("max_srq", a.max_srq);
  num("max_srq_wr", a.max_srq_wr);
  num("max_srq_sge", a.max_srq_sge);
  num("max_pkeys", a.max_pkeys);
  num("local_ca_ack_delay", a.local_ca_ack_delay);
  num("phys_port_cnt", a.phys_port_cnt);
  return o;
}

Napi::Value Context::QueryPort(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  uint8_t port = arg.U8(info[0], "port_num");
  ibv_port_attr a;
  memset(&a, 0, sizeof a);
  int err = ibv_query_port(ctx_, port, &a);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err), "port " + std::to_string(port) + " does not exist", "port_num");
  Napi::Object o = Napi::Object::New(env);
  auto num = [&](const char* k, double v) { o.Set(k, Napi::Number::New(env, v)); };
  num("state", a.state);
  num("max_mtu", a.max_mtu);
  num("active_mtu", a.active_mtu);
  num("gid_tbl_len", a.gid_tbl_len);
  num("port_cap_flags", a.port_cap_flags);
  num("max_msg_sz", a.max_msg_sz);
  num("bad_pkey_cntr", a.bad_pkey_cntr);
  num("qkey_viol_cntr", a.qkey_viol_cntr);
  num("pkey_tbl_len", a.pkey_tbl_len);
  num("lid", a.lid);
  num("sm_lid", a.sm_lid);
  num("lmc", a.lmc);
  num("max_vl_num", a.max_vl_num);
  num("sm_sl", a.sm_sl);
  num("subnet_timeout", a.subnet_timeout);
  num("init_type_reply", a.init_type_reply);
  num("active_width", a.active_width);
  num("active_speed", a.active_speed);
  num("phys_state", a.phys_state);
  num("link_layer", a.link_layer);
  num("flags", a.flags);
  num("port_cap_flags2", a.port_cap_flags2);
  return o;
}

Napi::Value Context::QueryGid(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  uint8_t port = arg.U8(info[0], "port_num");
  int index = arg.I32(info[1], "index");
  union ibv_gid gid;
  memset(&gid, 0, sizeof gid);
  errno = 0;
  int err = ibv_query_gid(ctx_, port, index, &gid);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err));
  return Napi::String::New(env, GidText(gid));
}

namespace {
Napi::Object GidEntryObject(Napi::Env env, const ibv_gid_entry& e) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("gid", GidText(e.gid));
  o.Set("gid_index", Napi::Number::New(env, e.gid_index));
  o.Set("port_num", Napi::Number::New(env, e.port_num));
  o.Set("gid_type", Napi::Number::New(env, e.gid_type));
  o.Set("ndev_ifindex", Napi::Number::New(env, e.ndev_ifindex));
  return o;
}
}  // namespace

Napi::Value Context::QueryGidEx(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  uint32_t port = arg.U32(info[0], "port_num");
  uint32_t index = arg.U32(info[1], "index");
  ibv_gid_entry e;
  memset(&e, 0, sizeof e);
  errno = 0;
  int err = ibv_query_gid_ex(ctx_, port, index, &e, 0);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err), err == ENODATA || errno == ENODATA ? "the GID slot is empty" : "");
  return GidEntryObject(env, e);
}

Napi::Value Context::QueryGidTable(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  ibv_port_attr pa;
  memset(&pa, 0, sizeof pa);
  size_t max = 0;
  ibv_device_attr da;
  if (ibv_query_device(ctx_, &da) == 0) {
    for (int p = 1; p <= da.phys_port_cnt; p++) {
      if (ibv_query_port(ctx_, p, &pa) == 0) max += pa.gid_tbl_len;
    }
  }
  std::vector<ibv_gid_entry> entries(max > 0 ? max : 1);
  errno = 0;
  ssize_t n = ibv_query_gid_table(ctx_, entries.data(), entries.size(), 0);
  if (n < 0) ThrowVerbs(env, verb, ErrnoOf(static_cast<int>(n)));
  Napi::Array out = Napi::Array::New(env, n);
  for (ssize_t i = 0; i < n; i++) out.Set(static_cast<uint32_t>(i), GidEntryObject(env, entries[i]));
  return out;
}

Napi::Value Context::QueryPkey(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  uint8_t port = arg.U8(info[0], "port_num");
  int index = arg.I32(info[1], "index");
  __be16 pkey = 0;
  errno = 0;
  int err = ibv_query_pkey(ctx_, port, index, &pkey);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err), "no P_Key at index " + std::to_string(index), "index");
  return Napi::Number::New(env, be16toh(pkey));
}

Napi::Value Context::AllocPd(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  errno = 0;
  ibv_pd* pd = ibv_alloc_pd(ctx_);
  if (pd == nullptr) ThrowVerbs(env, verb, errno != 0 ? errno : ENOMEM);
  Napi::Object obj = NewInstance(AddonOf(env)->pdCtor);
  ProtectionDomain::Unwrap(obj)->Attach(this, Value(), pd);
  return obj;
}

// createCq(cqe, channel | null, comp_vector)
Napi::Value Context::CreateCq(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  int cqe = arg.I32(info[0], "cqe");
  CompletionChannel* ch = nullptr;
  Napi::Object chJs;
  if (!info[1].IsUndefined() && !info[1].IsNull()) {
    if (!info[1].IsObject() || !info[1].As<Napi::Object>().CheckTypeTag(&kChannelTag)) {
      ThrowForeign(env, verb, "channel", "completion channel");
    }
    chJs = info[1].As<Napi::Object>();
    ch = CompletionChannel::Unwrap(chJs);
    if (ch->destroyed()) ThrowVerbs(env, verb, EINVAL, "the completion channel was already destroyed", "channel");
    if (ch->context() != this) ThrowVerbs(env, verb, EINVAL, "the channel belongs to another device", "channel");
  }
  int vector = arg.I32(info[2], "comp_vector", true);
  // Constructed first so cq_context can name it: events come back to this object.
  Napi::Object obj = NewInstance(AddonOf(env)->cqCtor);
  CompletionQueue* wrap = CompletionQueue::Unwrap(obj);
  errno = 0;
  ibv_cq* cq = ibv_create_cq(ctx_, cqe, wrap, ch ? ch->channel() : nullptr, vector);
  if (cq == nullptr) ThrowVerbs(env, verb, errno != 0 ? errno : EINVAL);
  wrap->Attach(this, Value(), ch, chJs, cq);
  return obj;
}

Napi::Value Context::CreateCompChannel(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  errno = 0;
  ibv_comp_channel* ch = ibv_create_comp_channel(ctx_);
  if (ch == nullptr) ThrowVerbs(env, verb, errno != 0 ? errno : ENOMEM);
  Napi::Object obj = NewInstance(AddonOf(env)->channelCtor);
  CompletionChannel::Unwrap(obj)->Attach(this, Value(), ch);
  return obj;
}

// getAsyncEvent(timeoutMs?) → Promise<{ event_type, qp_num?, cq?, port_num? } | null>,
// acknowledged at once (ibv_ack_async_event) so no destroy ever waits on it.
Napi::Value Context::GetAsyncEvent(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  double timeout = TimeoutArg(env, verb, info[0]);
  return asyncWaits_.Wait(env, Value(), ctx_->async_fd, timeout,
                          [this](Napi::Env env, Napi::Value* out) { return ReadAsyncEvent(env, out); });
}

bool Context::ReadAsyncEvent(Napi::Env env, Napi::Value* out) {
  if (destroyed()) {
    *out = env.Null();
    return true;
  }
  ibv_async_event ev;
  if (ibv_get_async_event(ctx_, &ev) != 0) return false;  // EAGAIN: nothing yet
  Napi::Object o = Napi::Object::New(env);
  o.Set("event_type", Napi::Number::New(env, ev.event_type));
  switch (ev.event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
      o.Set("qp_num", Napi::Number::New(env, ev.element.qp->qp_num));
      break;
    case IBV_EVENT_CQ_ERR: {
      auto* cq = static_cast<CompletionQueue*>(ev.element.cq->cq_context);
      if (cq != nullptr && !cq->destroyed()) o.Set("cq", cq->Value());
      break;
    }
    case IBV_EVENT_PORT_ACTIVE:
    case IBV_EVENT_PORT_ERR:
    case IBV_EVENT_LID_CHANGE:
    case IBV_EVENT_PKEY_CHANGE:
    case IBV_EVENT_SM_CHANGE:
    case IBV_EVENT_CLIENT_REREGISTER:
    case IBV_EVENT_GID_CHANGE:
      o.Set("port_num", Napi::Number::New(env, ev.element.port_num));
      break;
    default:
      break;
  }
  ibv_ack_async_event(&ev);
  *out = o;
  return true;
}

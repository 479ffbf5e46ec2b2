// EventChannel (struct rdma_event_channel) and CmId (struct rdma_cm_id) over librdmacm.
// Events are read like completion-channel events: the channel's fd is non-blocking and
// watched by the poller thread; rdma_get_cm_event runs on the JS thread once it is readable.
#include "cm.h"

#include <arpa/inet.h>
#include <fcntl.h>

#include <cerrno>
#include <cmath>

namespace {
// A timeout argument in ms: undefined → forever (-1).
double TimeoutArg(Napi::Env env, const char* verb, Napi::Value v) {
  if (v.IsUndefined() || v.IsNull()) return -1;
  if (!v.IsNumber()) ThrowType(env, std::string(verb) + ": timeoutMs must be a number");
  double ms = v.As<Napi::Number>().DoubleValue();
  if (std::isnan(ms) || ms < 0) ThrowType(env, std::string(verb) + ": timeoutMs must be ≥ 0");
  return std::isinf(ms) ? -1 : ms;
}

// librdmacm returns -1 with errno.
int CmErr() { return errno != 0 ? errno : EINVAL; }

// librdmacm 44 dereferences id->verbs (and the device behind it) in rdma_resolve_route,
// rdma_connect, rdma_accept and rdma_create_qp without checking it: on an id that is not yet
// bound to a device that is a segfault (measured: rdma_resolve_route on a fresh id). The
// kernel answers such calls with EINVAL (the id is in the wrong state), so that is the error.
void NeedDevice(Napi::Env env, const char* verb, rdma_cm_id* id, const char* what) {
  if (id->verbs == nullptr) {
    ThrowVerbs(env, verb, EINVAL, std::string("the id is not bound to a device yet: ") + what, "id");
  }
}

// Private data from a Uint8Array / ArrayBuffer / number[] / undefined, at most 255 bytes (the
// C field is a uint8_t length: a longer one would wrap silently).
std::vector<uint8_t> PrivateData(const Arg& arg, Napi::Value v, const std::string& name) {
  std::vector<uint8_t> out;
  if (v.IsUndefined() || v.IsNull()) return out;
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    out.assign(a.Data(), a.Data() + a.ElementLength());
  } else if (v.IsArrayBuffer()) {
    Napi::ArrayBuffer b = v.As<Napi::ArrayBuffer>();
    auto* p = static_cast<uint8_t*>(b.Data());
    out.assign(p, p + b.ByteLength());
  } else if (v.IsArray()) {
    Napi::Array a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) out.push_back(arg.U8(a.Get(i), name + "[" + std::to_string(i) + "]"));
  } else {
    ThrowArgType(arg.env, arg.verb, name, "uint8array", v);
  }
  if (out.size() > 255) {
    ThrowVerbs(arg.env, arg.verb, EINVAL,
               name + " is " + std::to_string(out.size()) + " bytes; private_data_len is a uint8_t (at most 255)",
               "private_data_len");
  }
  return out;
}

// struct rdma_conn_param from { private_data, responder_resources, initiator_depth,
// flow_control, retry_count, rnr_retry_count, srq, qp_num } (absent fields are 0); null → NULL.
bool ReadConnParam(const Arg& arg, Napi::Value v, rdma_conn_param* p, std::vector<uint8_t>* data) {
  memset(p, 0, sizeof *p);
  if (v.IsUndefined() || v.IsNull()) return false;
  Napi::Object o = arg.Obj(v, "conn_param");
  *data = PrivateData(arg, o.Get("private_data"), "conn_param.private_data");
  p->private_data = data->empty() ? nullptr : data->data();
  p->private_data_len = static_cast<uint8_t>(data->size());
  p->responder_resources = arg.U8(o.Get("responder_resources"), "conn_param.responder_resources", true);
  p->initiator_depth = arg.U8(o.Get("initiator_depth"), "conn_param.initiator_depth", true);
  p->flow_control = arg.U8(o.Get("flow_control"), "conn_param.flow_control", true);
  p->retry_count = arg.U8(o.Get("retry_count"), "conn_param.retry_count", true);
  p->rnr_retry_count = arg.U8(o.Get("rnr_retry_count"), "conn_param.rnr_retry_count", true);
  p->srq = arg.U8(o.Get("srq"), "conn_param.srq", true);
  p->qp_num = arg.U32(o.Get("qp_num"), "conn_param.qp_num", true);
  return true;
}
}  // namespace

// ---------------------------------------------------------------------------------------
// Addresses

bool ReadSockaddr(const Arg& arg, Napi::Value v, const std::string& name, sockaddr_storage* out, bool optional) {
  memset(out, 0, sizeof *out);
  if (optional && (v.IsUndefined() || v.IsNull())) return false;
  Napi::Object o = arg.Obj(v, name);
  Napi::Value av = o.Get("addr");
  if (!av.IsString()) ThrowArgType(arg.env, arg.verb, name + ".addr", "string", av);
  std::string text = av.As<Napi::String>().Utf8Value();
  uint16_t port = arg.U16(o.Get("port"), name + ".port", true);
  auto* in4 = reinterpret_cast<sockaddr_in*>(out);
  auto* in6 = reinterpret_cast<sockaddr_in6*>(out);
  if (inet_pton(AF_INET, text.c_str(), &in4->sin_addr) == 1) {
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
  } else if (inet_pton(AF_INET6, text.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
  } else {
    ThrowVerbs(arg.env, arg.verb, EINVAL, name + ".addr \"" + text + "\" is not an IPv4 or IPv6 address",
               name + ".addr");
  }
  return true;
}

Napi::Value SockaddrObject(Napi::Env env, const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = "";
  Napi::Object o = Napi::Object::New(env);
  if (sa == nullptr) return env.Null();
  if (sa->sa_family == AF_INET) {
    auto* in4 = reinterpret_cast<const sockaddr_in*>(sa);
    inet_ntop(AF_INET, &in4->sin_addr, buf, sizeof buf);
    o.Set("port", Napi::Number::New(env, ntohs(in4->sin_port)));
  } else if (sa->sa_family == AF_INET6) {
    auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf);
    o.Set("port", Napi::Number::New(env, ntohs(in6->sin6_port)));
  } else {
    return env.Null();  // AF_IB or unset
  }
  o.Set("family", Napi::Number::New(env, sa->sa_family));
  o.Set("addr", buf);
  return o;
}

// ---------------------------------------------------------------------------------------
// EventChannel

Napi::Function EventChannel::Define(Napi::Env env) {
  return DefineVerbsClass<EventChannel>(
      env, "EventChannel",
      {
          {"createId", "rdma_create_id", Method<EventChannel, &EventChannel::CreateId>},
          {"getEvent", "rdma_get_cm_event", Method<EventChannel, &EventChannel::GetEvent>},
          {"destroy", "rdma_destroy_event_channel", Method<EventChannel, &EventChannel::Destroy>},
      });
}

EventChannel::EventChannel(const Napi::CallbackInfo& info) : Napi::ObjectWrap<EventChannel>(info), env_(info.Env()) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "EventChannel objects come from createEventChannel()");
  TagWrap(this, info);
}

void EventChannel::Attach(rdma_event_channel* ch) {
  ch_ = ch;
  // Read on the JS thread only after the poller saw the fd readable; non-blocking so that a
  // read that finds nothing returns EAGAIN instead of blocking JS.
  int flags = fcntl(ch_->fd, F_GETFL);
  if (flags >= 0) fcntl(ch_->fd, F_SETFL, flags | O_NONBLOCK);
}

int EventChannel::Release(bool force) {
  // librdmacm closes the fd whatever still uses it (the ids' events would be lost): an
  // explicit destroy with ids on the channel is refused like a PD with an MR.
  if (!force && !dependents().empty()) return EBUSY;
  waits_.CancelAll(env_);  // pending getEvent calls resolve with null
  rdma_destroy_event_channel(ch_);
  ch_ = nullptr;
  return 0;
}

Napi::Value EventChannel::Destroy(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Resource::Destroy(),
                       "an rdma_cm_id still uses this channel (rdma_destroy_id it first)");
}

// createId(ps) → CmId (rdma_create_id; qp_type follows the port space: RC for
// RDMA_PS_TCP/IPOIB, UD for RDMA_PS_UDP, as librdmacm decides).
Napi::Value EventChannel::CreateId(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  uint32_t ps = arg.U32(info[0], "ps");
  Napi::Object obj = NewInstance(AddonOf(env)->cmIdCtor);
  CmId* wrap = CmId::Unwrap(obj);
  rdma_cm_id* id = nullptr;
  errno = 0;
  if (rdma_create_id(ch_, &id, wrap, static_cast<rdma_port_space>(ps)) != 0) ThrowVerbs(env, verb, CmErr());
  wrap->Attach(this, Value(), id);
  return obj;
}

// getEvent(timeoutMs?) → Promise<CmEvent | null> (null: timed out, or the channel was destroyed).
Napi::Value EventChannel::GetEvent(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  double timeout = TimeoutArg(env, verb, info[0]);
  return waits_.Wait(env, Value(), ch_->fd, timeout,
                     [this](Napi::Env env, Napi::Value* out) { return ReadEvent(env, out); });
}

// ReadEvent lives in cm-event.cc with the event's translation.

// ---------------------------------------------------------------------------------------
// CmId

Napi::Function CmId::Define(Napi::Env env) {
  return DefineVerbsClass<CmId>(env, "CmId",
                                {
                                    {"verbs", "rdma_cm_id.verbs", Method<CmId, &CmId::Verbs>},
                                    {"info", "rdma_cm_id", Method<CmId, &CmId::Info>},
                                    {"bindAddr", "rdma_bind_addr", Method<CmId, &CmId::BindAddr>},
                                    {"resolveAddr", "rdma_resolve_addr", Method<CmId, &CmId::ResolveAddr>},
                                    {"resolveRoute", "rdma_resolve_route", Method<CmId, &CmId::ResolveRoute>},
                                    {"listen", "rdma_listen", Method<CmId, &CmId::Listen>},
                                    {"createQp", "rdma_create_qp", Method<CmId, &CmId::CreateQp>},
                                    {"destroyQp", "rdma_destroy_qp", Method<CmId, &CmId::DestroyQp>},
                                    {"connect", "rdma_connect", Method<CmId, &CmId::Connect>},
                                    {"accept", "rdma_accept", Method<CmId, &CmId::Accept>},
                                    {"reject", "rdma_reject", Method<CmId, &CmId::Reject>},
                                    {"disconnect", "rdma_disconnect", Method<CmId, &CmId::Disconnect>},
                                    {"initQpAttr", "rdma_init_qp_attr", Method<CmId, &CmId::InitQpAttr>},
                                    {"joinMulticast", "rdma_join_multicast", Method<CmId, &CmId::JoinMulticast>},
                                    {"leaveMulticast", "rdma_leave_multicast", Method<CmId, &CmId::LeaveMulticast>},
                                    {"takeQpChanges", "rdma_cm_id.qp", Method<CmId, &CmId::TakeQpChanges>},
                                    {"unacked", "rdma_destroy_id", Method<CmId, &CmId::Unacked>},
                                    {"destroy", "rdma_destroy_id", Method<CmId, &CmId::Destroy>},
                                });
}

CmId::CmId(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CmId>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "CmId objects come from createId() or a CONNECT_REQUEST");
  TagWrap(this, info);
}

void CmId::Attach(EventChannel* ch, Napi::Object chJs, rdma_cm_id* id) {
  id_ = id;
  id_->context = this;
  DependOn(ch, chJs);
}

int CmId::Release(bool force) {
  if (!force && unacked > 0) {
    // rdma_destroy_id waits (forever, in a blocking pthread_cond_wait) until every event it
    // has reported for this id is acknowledged: refused here instead of hanging the program.
    return EBUSY;
  }
  // The QP stays a plain verbs QP (C's rdma_destroy_id leaves id->qp alone).
  if (qp != nullptr) qp->ForgetCmId();
  qp = nullptr;
  int err = rdma_destroy_id(id_) != 0 ? CmErr() : 0;
  if (err != 0 && !force) return err;
  id_ = nullptr;
  return 0;
}

Napi::Value CmId::Destroy(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  int pending = unacked;
  int err = Resource::Destroy();
  if (err == EBUSY && pending > 0) {
    ThrowVerbs(env, verb, EBUSY,
               std::to_string(pending) + " event" + (pending == 1 ? "" : "s") +
                   " of this id not acknowledged (rdma_ack_cm_event): rdma_destroy_id would wait for them forever",
               "rdma_ack_cm_event");
  }
  return DestroyResult(env, verb, err, "");
}

int CmId::QpState() const {
  if (id_ == nullptr || id_->qp == nullptr) return -1;
  ibv_qp_attr a;
  ibv_qp_init_attr init;
  if (ibv_query_qp(id_->qp, &a, IBV_QP_STATE, &init) != 0) return -1;
  return a.qp_state;
}

void CmId::NoteQp(const char* during, int before, int event) {
  int after = QpState();
  if (after >= 0 && after != before) changes_.push_back(QpChange{during, event, before, after});
}

// unacked() → the number of events rdma_destroy_id would wait for.
Napi::Value CmId::Unacked(const Napi::CallbackInfo& info, const char* verb) {
  return Napi::Number::New(info.Env(), unacked);
}

// takeQpChanges() → [{ during, event, from, to }]: the QP state changes librdmacm made since
// the last call (from -1: the QP did not exist before, i.e. rdma_create_qp; event -1: in a
// call, else in the rdma_get_cm_event that returned that event).
Napi::Value CmId::TakeQpChanges(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Napi::Array out = Napi::Array::New(env, changes_.size());
  for (size_t i = 0; i < changes_.size(); i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("during", changes_[i].during);
    o.Set("event", Napi::Number::New(env, changes_[i].event));
    o.Set("from", Napi::Number::New(env, changes_[i].from));
    o.Set("to", Napi::Number::New(env, changes_[i].to));
    out.Set(static_cast<uint32_t>(i), o);
  }
  changes_.clear();
  return out;
}

// verbs() → Context | null: librdmacm's own ibv_context for the device the id is bound to
// (after rdma_bind_addr / ADDR_RESOLVED), the one rdma_create_qp's PD must come from. One JS
// object per device, never closed by VerbsLab (librdmacm owns it).
Napi::Value CmId::Verbs(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  if (id_->verbs == nullptr) return env.Null();
  return AddonOf(env)->BorrowedContext(env, id_->verbs);
}

// info() → { ps, qp_type, port_num, device, src_addr, dst_addr, route: { num_paths, path } }
Napi::Value CmId::Info(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Napi::Object o = Napi::Object::New(env);
  o.Set("ps", Napi::Number::New(env, id_->ps));
  o.Set("qp_type", Napi::Number::New(env, id_->qp_type));
  o.Set("port_num", Napi::Number::New(env, id_->port_num));
  o.Set("device", id_->verbs != nullptr ? Napi::Value(Napi::String::New(env, ibv_get_device_name(id_->verbs->device)))
                                        : env.Null());
  o.Set("src_addr", SockaddrObject(env, rdma_get_local_addr(id_)));
  o.Set("dst_addr", SockaddrObject(env, rdma_get_peer_addr(id_)));
  const rdma_ib_addr& ib = id_->route.addr.addr.ibaddr;
  o.Set("sgid", GidText(ib.sgid));
  o.Set("dgid", GidText(ib.dgid));
  o.Set("pkey", Napi::Number::New(env, ntohs(ib.pkey)));
  o.Set("qp_num", id_->qp != nullptr ? Napi::Number::New(env, id_->qp->qp_num) : env.Null());
  Napi::Object route = Napi::Object::New(env);
  route.Set("num_paths", Napi::Number::New(env, id_->route.num_paths));
  if (id_->route.num_paths > 0 && id_->route.path_rec != nullptr) {
    const ibv_sa_path_rec& p = id_->route.path_rec[0];
    Napi::Object path = Napi::Object::New(env);
    ibv_gid g;
    memcpy(g.raw, p.sgid.raw, 16);
    path.Set("sgid", GidText(g));
    memcpy(g.raw, p.dgid.raw, 16);
    path.Set("dgid", GidText(g));
    path.Set("mtu", Napi::Number::New(env, p.mtu));
    path.Set("rate", Napi::Number::New(env, p.rate));
    path.Set("hop_limit", Napi::Number::New(env, p.hop_limit));
    path.Set("traffic_class", Napi::Number::New(env, p.traffic_class));
    path.Set("flow_label", Napi::Number::New(env, ntohl(p.flow_label)));
    path.Set("sl", Napi::Number::New(env, p.sl));
    path.Set("pkey", Napi::Number::New(env, ntohs(p.pkey)));
    path.Set("packet_life_time", Napi::Number::New(env, p.packet_life_time));
    route.Set("path", path);
  }
  o.Set("route", route);
  return o;
}

// bindAddr({ addr, port })
Napi::Value CmId::BindAddr(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  sockaddr_storage sa;
  ReadSockaddr(arg, info[0], "addr", &sa, false);
  errno = 0;
  if (rdma_bind_addr(id_, reinterpret_cast<sockaddr*>(&sa)) != 0) ThrowVerbs(env, verb, CmErr());
  return env.Undefined();
}

// resolveAddr(src | null, dst, timeout_ms)
Napi::Value CmId::ResolveAddr(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  sockaddr_storage src, dst;
  bool hasSrc = ReadSockaddr(arg, info[0], "src_addr", &src, true);
  ReadSockaddr(arg, info[1], "dst_addr", &dst, false);
  int timeout = arg.I32(info[2], "timeout_ms");
  errno = 0;
  if (rdma_resolve_addr(id_, hasSrc ? reinterpret_cast<sockaddr*>(&src) : nullptr, reinterpret_cast<sockaddr*>(&dst),
                        timeout) != 0) {
    ThrowVerbs(env, verb, CmErr());
  }
  return env.Undefined();
}

Napi::Value CmId::ResolveRoute(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  int timeout = Arg{env, verb}.I32(info[0], "timeout_ms");
  NeedDevice(env, verb, id_, "rdma_resolve_route needs ADDR_RESOLVED first");
  errno = 0;
  if (rdma_resolve_route(id_, timeout) != 0) ThrowVerbs(env, verb, CmErr());
  return env.Undefined();
}

Napi::Value CmId::Listen(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  int backlog = Arg{env, verb}.I32(info[0], "backlog", true);
  errno = 0;
  if (rdma_listen(id_, backlog) != 0) ThrowVerbs(env, verb, CmErr());
  return env.Undefined();
}

// createQp(pd, { send_cq, recv_cq, cap, qp_type, sq_sig_all }) → QueuePair (rdma_create_qp:
// librdmacm creates the QP on id->verbs and moves it to INIT, RTS for UD, itself).
Napi::Value CmId::CreateQp(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  bool ownPd = !info[0].IsUndefined() && !info[0].IsNull();
  if (ownPd && (!info[0].IsObject() || !info[0].As<Napi::Object>().CheckTypeTag(&kPdTag))) {
    ThrowForeign(env, verb, "pd", "object");
  }
  NeedDevice(env, verb, id_, "rdma_create_qp needs rdma_bind_addr, ADDR_RESOLVED or a CONNECT_REQUEST first");
  VerbsAddon* addon = AddonOf(env);
  if (!ownPd && id_->pd == nullptr) ThrowVerbs(env, verb, EINVAL, "librdmacm has no PD for this id's device", "pd");
  // Without a PD librdmacm uses the device's own (id->pd), which the QP's JS object then names.
  Napi::Object pdJs = ownPd ? info[0].As<Napi::Object>() : addon->BorrowedPd(env, id_->pd).As<Napi::Object>();
  ProtectionDomain* pd = ProtectionDomain::Unwrap(pdJs);
  if (pd->destroyed()) ThrowVerbs(env, verb, EINVAL, "the PD was already deallocated", "pd");
  if (id_->qp != nullptr) ThrowVerbs(env, verb, EINVAL, "this id already has a QP (rdma_destroy_qp it first)", "id");
  if (pd->context()->ctx() != id_->verbs) {
    // librdmacm's own check (id->verbs != pd->context → EINVAL), with the reason: the CQs
    // would also be of the wrong device.
    ThrowVerbs(env, verb, EINVAL,
               "the PD belongs to another ibv_context than id.verbs (allocate it on id.verbs, as librdmacm requires)",
               "pd");
  }
  QpInit in = QueuePair::ReadInit(arg, info[1], pd->context());
  int before = QpState();
  errno = 0;
  if (rdma_create_qp(id_, pd->pd(), &in.attr) != 0) {
    int err = CmErr();
    ThrowVerbs(env, verb, err);
  }
  Napi::Object obj = NewInstance(AddonOf(env)->qpCtor);
  QueuePair* q = QueuePair::Unwrap(obj);
  q->AttachCreated(pd, pdJs, in, id_->qp);
  q->AttachCm(this, Value());
  obj.Set("pd", pdJs);  // librdmacm's own when the call named none
  qp = q;
  NoteQp("rdma_create_qp", before);
  return obj;
}

Napi::Value CmId::DestroyQp(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  if (qp == nullptr) ThrowVerbs(env, verb, EINVAL, "this id has no QP", "id");
  return qp->DestroyFromCm(env, verb);
}

Napi::Value CmId::Connect(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  rdma_conn_param p;
  std::vector<uint8_t> data;
  bool has = ReadConnParam(arg, info[0], &p, &data);
  NeedDevice(env, verb, id_, "rdma_connect needs ROUTE_RESOLVED first");
  int before = QpState();
  errno = 0;
  if (rdma_connect(id_, has ? &p : nullptr) != 0) ThrowVerbs(env, verb, CmErr());
  NoteQp("rdma_connect", before);
  return env.Undefined();
}

Napi::Value CmId::Accept(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  rdma_conn_param p;
  std::vector<uint8_t> data;
  bool has = ReadConnParam(arg, info[0], &p, &data);
  NeedDevice(env, verb, id_, "rdma_accept is for the id of a CONNECT_REQUEST");
  // librdmacm reads conn_param->qp_num unchecked when the id has no QP.
  if (!has && id_->qp == nullptr) {
    ThrowVerbs(env, verb, EINVAL, "without a QP on the id, rdma_accept needs conn_param (with qp_num)", "conn_param");
  }
  int before = QpState();
  errno = 0;
  int ret = rdma_accept(id_, has ? &p : nullptr);
  int err = ret != 0 ? CmErr() : 0;
  NoteQp("rdma_accept", before);  // librdmacm moves the QP to RTR before it sends the REP
  if (err != 0) ThrowVerbs(env, verb, err);
  return env.Undefined();
}

Napi::Value CmId::Reject(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  std::vector<uint8_t> data = PrivateData(arg, info[0], "private_data");
  errno = 0;
  if (rdma_reject(id_, data.empty() ? nullptr : data.data(), static_cast<uint8_t>(data.size())) != 0) {
    ThrowVerbs(env, verb, CmErr());
  }
  return env.Undefined();
}

Napi::Value CmId::Disconnect(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  int before = QpState();
  errno = 0;
  int ret = rdma_disconnect(id_);
  int err = ret != 0 ? CmErr() : 0;
  NoteQp("rdma_disconnect", before);  // librdmacm moves the QP to ERR first
  if (err != 0) ThrowVerbs(env, verb, err);
  return env.Undefined();
}

// initQpAttr(qp_state) → { attr, attr_mask }: what rdma_init_qp_attr fills for that state.
Napi::Value CmId::InitQpAttr(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  a.qp_state = static_cast<ibv_qp_state>(Arg{env, verb}.U32(info[0], "qp_state"));
  int mask = 0;
  errno = 0;
  if (rdma_init_qp_attr(id_, &a, &mask) != 0) ThrowVerbs(env, verb, CmErr());
  Napi::Object o = QueuePair::AttrObject(env, a);
  Napi::Object r = Napi::Object::New(env);
  r.Set("attr", o);
  r.Set("attr_mask", Napi::Number::New(env, mask));
  return r;
}

// joinMulticast(addr): rdma_join_multicast(id, addr, NULL). MULTICAST_JOIN follows; librdmacm
// attaches id->qp to the group inside the rdma_get_cm_event that returns it.
Napi::Value CmId::JoinMulticast(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  sockaddr_storage sa;
  ReadSockaddr(arg, info[0], "addr", &sa, false);
  errno = 0;
  if (rdma_join_multicast(id_, reinterpret_cast<sockaddr*>(&sa), nullptr) != 0) {
    int err = CmErr();
    // The kernel's EINVAL (cma's rdma_join_multicast): no device yet, or not a UD id.
    if (err == EINVAL) {
      ThrowVerbs(env, verb, err,
                 id_->ps != RDMA_PS_UDP ? "only RDMA_PS_UDP ids can join a multicast group"
                 : id_->verbs == nullptr
                     ? "the id is not bound to a device yet: rdma_bind_addr or rdma_resolve_addr first"
                     : "the kernel refused the join (the id must be bound or address-resolved, not connecting)",
                 "id");
    }
    ThrowVerbs(env, verb, err);
  }
  return env.Undefined();
}

// leaveMulticast(addr): rdma_leave_multicast (ibv_detach_mcast of id->qp, then the kernel's leave).
Napi::Value CmId::LeaveMulticast(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  sockaddr_storage sa;
  ReadSockaddr(arg, info[0], "addr", &sa, false);
  errno = 0;
  if (rdma_leave_multicast(id_, reinterpret_cast<sockaddr*>(&sa)) != 0) {
    int err = CmErr();
    // librdmacm looks the address up in the id's own list of joins.
    if (err == EADDRNOTAVAIL) ThrowVerbs(env, verb, err, "this id has not joined that multicast group", "addr");
    ThrowVerbs(env, verb, err);
  }
  return env.Undefined();
}

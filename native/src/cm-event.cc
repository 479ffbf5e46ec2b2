// Reading CM events (rdma_get_cm_event on the JS thread once the poller saw the channel
// readable), CmEvent (held until rdma_ack_cm_event), and the module's rdma_cm functions.
#include <arpa/inet.h>
#include <netdb.h>

#include <cerrno>

#include "cm.h"

namespace {
Napi::Uint8Array Bytes(Napi::Env env, const void* p, uint8_t len) {
  Napi::Uint8Array a = Napi::Uint8Array::New(env, len);
  if (len > 0 && p != nullptr) memcpy(a.Data(), p, len);
  return a;
}

Napi::Object ConnParamObject(Napi::Env env, const rdma_conn_param& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("private_data", Bytes(env, c.private_data, c.private_data_len));
  o.Set("private_data_len", Napi::Number::New(env, c.private_data_len));
  o.Set("responder_resources", Napi::Number::New(env, c.responder_resources));
  o.Set("initiator_depth", Napi::Number::New(env, c.initiator_depth));
  o.Set("flow_control", Napi::Number::New(env, c.flow_control));
  o.Set("retry_count", Napi::Number::New(env, c.retry_count));
  o.Set("rnr_retry_count", Napi::Number::New(env, c.rnr_retry_count));
  o.Set("srq", Napi::Number::New(env, c.srq));
  o.Set("qp_num", Napi::Number::New(env, c.qp_num));
  return o;
}

Napi::Object UdParamObject(Napi::Env env, const rdma_ud_param& u) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("private_data", Bytes(env, u.private_data, u.private_data_len));
  o.Set("private_data_len", Napi::Number::New(env, u.private_data_len));
  o.Set("ah_attr", AhAttrObject(env, u.ah_attr));
  o.Set("qp_num", Napi::Number::New(env, u.qp_num));
  o.Set("qkey", Napi::Number::New(env, u.qkey));
  return o;
}

CmId* WrapOf(rdma_cm_id* id) { return id != nullptr ? static_cast<CmId*>(id->context) : nullptr; }
}  // namespace

// One rdma_get_cm_event. The QP states of every id on this channel are read first, because
// librdmacm may move the QP of the event's id while it processes the event (RTR/RTS on the
// connect response, ERR on REJECTED), and which id that is only shows once it is read.
bool EventChannel::ReadEvent(Napi::Env env, Napi::Value* out) {
  if (destroyed()) {
    *out = env.Null();
    return true;
  }
  std::map<CmId*, int> before;
  for (Resource* r : dependents()) {
    auto* id = dynamic_cast<CmId*>(r);
    if (id != nullptr && !id->destroyed()) before[id] = id->QpState();
  }
  rdma_cm_event* ev = nullptr;
  errno = 0;
  if (rdma_get_cm_event(ch_, &ev) != 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return false;  // not yet
    ThrowVerbs(env, "rdma_get_cm_event", errno != 0 ? errno : EIO);
  }
  CmId* listen = nullptr;
  CmId* id = nullptr;
  if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
    // A new rdma_cm_id (the child) that librdmacm made for this request; its context is the
    // listening id's until this wraps it.
    listen = WrapOf(ev->listen_id);
    Napi::Object childJs = NewInstance(AddonOf(env)->cmIdCtor);
    id = CmId::Unwrap(childJs);
    id->Attach(this, Value(), ev->id);
  } else {
    id = WrapOf(ev->id);
  }
  // librdmacm counts a CONNECT_REQUEST on the listening id (rdma_destroy_id of the listener
  // waits for it), every other event on its own id.
  CmId* counted = listen != nullptr ? listen : id;
  Napi::Object evJs = EventObject(env, ev, id, listen);
  CmEvent::Unwrap(evJs)->Attach(counted, counted->Value(), ev);
  auto it = before.find(id);
  if (it != before.end()) id->NoteQp("rdma_get_cm_event", it->second, ev->event);
  *out = evJs;
  return true;
}

Napi::Object EventChannel::EventObject(Napi::Env env, rdma_cm_event* ev, CmId* id, CmId* listen) {
  Napi::Object o = NewInstance(AddonOf(env)->cmEventCtor);
  o.Set("event", Napi::Number::New(env, ev->event));
  o.Set("status", Napi::Number::New(env, ev->status));
  o.Set("id", id->Value());
  if (listen != nullptr) o.Set("listen_id", listen->Value());
  // The union as librdmacm filled it: ud for RDMA_PS_UDP ids (and multicast), conn otherwise.
  bool ud = ev->id->ps == RDMA_PS_UDP || ev->id->ps == RDMA_PS_IPOIB || ev->event == RDMA_CM_EVENT_MULTICAST_JOIN ||
            ev->event == RDMA_CM_EVENT_MULTICAST_ERROR;
  if (ud) {
    rdma_ud_param u = ev->param.ud;
    // For multicast events librdmacm puts the join's context pointer in private_data.
    if (ev->event == RDMA_CM_EVENT_MULTICAST_JOIN || ev->event == RDMA_CM_EVENT_MULTICAST_ERROR) {
      u.private_data = nullptr;
      u.private_data_len = 0;
    }
    o.Set("ud", UdParamObject(env, u));
  } else {
    o.Set("conn", ConnParamObject(env, ev->param.conn));
  }
  return o;
}

// ---------------------------------------------------------------------------------------
// CmEvent

Napi::Function CmEvent::Define(Napi::Env env) {
  return DefineVerbsClass<CmEvent>(env, "CmEvent",
                                   {
                                       {"ack", "rdma_ack_cm_event", Method<CmEvent, &CmEvent::Ack>},
                                   });
}

CmEvent::CmEvent(const Napi::CallbackInfo& info) : Napi::ObjectWrap<CmEvent>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "CmEvent objects come from getEvent()");
  TagWrap(this, info);
}

void CmEvent::Attach(CmId* counted, Napi::Object countedJs, rdma_cm_event* ev) {
  ev_ = ev;
  counted_ = counted;
  counted_->unacked++;
  DependOn(counted, countedJs);  // so the id's teardown acknowledges it first
}

int CmEvent::Release(bool force) {
  rdma_ack_cm_event(ev_);  // cannot fail for an event librdmacm returned
  ev_ = nullptr;
  counted_->unacked--;
  return 0;
}

Napi::Value CmEvent::Ack(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Resource::Destroy(), "");
}

// ---------------------------------------------------------------------------------------
// Module functions

namespace {
Napi::Value CreateEventChannel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  VerbsAddon* addon = AddonOf(env);
  if (addon->cmDevices == nullptr) addon->cmDevices = rdma_get_devices(nullptr);  // see VerbsAddon::cmDevices
  errno = 0;
  rdma_event_channel* ch = rdma_create_event_channel();
  if (ch == nullptr) {
    int err = errno != 0 ? errno : ENODEV;
    ThrowVerbs(env, "rdma_create_event_channel", err,
               err == ENOENT || err == ENODEV ? "no /dev/infiniband/rdma_cm: is the rdma_ucm module loaded?" : "");
  }
  Napi::Object obj = NewInstance(AddonOf(env)->eventChannelCtor);
  EventChannel::Unwrap(obj)->Attach(ch);
  return obj;
}

// getAddrInfo(node | null, service | null, { ai_flags, ai_family, ai_qp_type, ai_port_space })
// → [{ ai_flags, ai_family, ai_qp_type, ai_port_space, ai_src_addr, ai_dst_addr }]
Napi::Value GetAddrInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* verb = "rdma_getaddrinfo";
  Arg arg{env, verb};
  auto text = [&](Napi::Value v, const char* name) -> std::string {
    if (v.IsUndefined() || v.IsNull()) return std::string();
    if (!v.IsString()) ThrowArgType(env, verb, name, "string", v);
    return v.As<Napi::String>().Utf8Value();
  };
  std::string node = text(info[0], "node"), service = text(info[1], "service");
  bool hasNode = !info[0].IsUndefined() && !info[0].IsNull();
  bool hasService = !info[1].IsUndefined() && !info[1].IsNull();
  rdma_addrinfo hints;
  memset(&hints, 0, sizeof hints);
  if (!info[2].IsUndefined() && !info[2].IsNull()) {
    Napi::Object h = arg.Obj(info[2], "hints");
    hints.ai_flags = arg.I32(h.Get("ai_flags"), "hints.ai_flags", true);
    hints.ai_family = arg.I32(h.Get("ai_family"), "hints.ai_family", true);
    hints.ai_qp_type = arg.I32(h.Get("ai_qp_type"), "hints.ai_qp_type", true);
    hints.ai_port_space = arg.I32(h.Get("ai_port_space"), "hints.ai_port_space", true);
  }
  rdma_addrinfo* res = nullptr;
  errno = 0;
  int ret = rdma_getaddrinfo(hasNode ? node.c_str() : nullptr, hasService ? service.c_str() : nullptr, &hints, &res);
  if (ret != 0) {
    // librdmacm 44 returns getaddrinfo's EAI_* code (negative) or -1 with errno.
    int err = ret == -1 && errno != 0 ? errno : EINVAL;
    std::string why = ret != -1 ? std::string("getaddrinfo: ") + gai_strerror(ret) : "";
    ThrowVerbs(env, verb, err, why, hasNode ? "node" : "service");
  }
  Napi::Array out = Napi::Array::New(env);
  uint32_t n = 0;
  for (rdma_addrinfo* a = res; a != nullptr; a = a->ai_next) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("ai_flags", Napi::Number::New(env, a->ai_flags));
    o.Set("ai_family", Napi::Number::New(env, a->ai_family));
    o.Set("ai_qp_type", Napi::Number::New(env, a->ai_qp_type));
    o.Set("ai_port_space", Napi::Number::New(env, a->ai_port_space));
    o.Set("ai_src_addr", SockaddrObject(env, a->ai_src_len > 0 ? a->ai_src_addr : nullptr));
    o.Set("ai_dst_addr", SockaddrObject(env, a->ai_dst_len > 0 ? a->ai_dst_addr : nullptr));
    out.Set(n++, o);
  }
  rdma_freeaddrinfo(res);
  return out;
}
}  // namespace

void DefineCmExports(Napi::Env env, Napi::Object exports) {
  exports.Set("createEventChannel", Napi::Function::New(env, CreateEventChannel, "createEventChannel"));
  exports.Set("getAddrInfo", Napi::Function::New(env, GetAddrInfo, "getAddrInfo"));
}

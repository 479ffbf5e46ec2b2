// The rdma_cm classes (librdmacm), built only when CMake found <rdma/rdma_cma.h> and
// librdmacm (VERBSLAB_HAVE_RDMACM): EventChannel (struct rdma_event_channel), CmId (struct
// rdma_cm_id) and CmEvent (struct rdma_cm_event, held until rdma_ack_cm_event). Same rules as
// objects.h: `this` and liveness checked first, idempotent destroy, no copies.
#pragma once

#include <rdma/rdma_cma.h>

#include "objects.h"

class CmId;

class EventChannel : public Napi::ObjectWrap<EventChannel>, public Resource {
 public:
  static constexpr const char* kName = "EventChannel";
  static constexpr const napi_type_tag& kTag = kEventChannelTag;
  static Napi::Function Define(Napi::Env env);
  explicit EventChannel(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(rdma_event_channel* ch);
  rdma_event_channel* channel() const { return ch_; }

 private:
  int Release(bool force) override;
  Napi::Value CreateId(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value GetEvent(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Destroy(const Napi::CallbackInfo& info, const char* verb);
  bool ReadEvent(Napi::Env env, Napi::Value* out);
  Napi::Object EventObject(Napi::Env env, rdma_cm_event* ev, CmId* id, CmId* listen);
  rdma_event_channel* ch_ = nullptr;
  FdWaits waits_;
  Napi::Env env_;
};

// One observed change of a CM QP's state across a librdmacm call, or across the
// rdma_get_cm_event that returned `event` (librdmacm modifies the QP itself: INIT in
// rdma_create_qp, RTR/RTS in rdma_accept and on the connect response, ERR in rdma_disconnect
// and on REJECTED). Only the states before and after are visible from outside librdmacm.
struct QpChange {
  std::string during;
  int event;  // RDMA_CM_EVENT_*, or -1 for a call
  int from, to;
};

class CmId : public Napi::ObjectWrap<CmId>, public Resource {
 public:
  static constexpr const char* kName = "CmId";
  static constexpr const napi_type_tag& kTag = kCmIdTag;
  static Napi::Function Define(Napi::Env env);
  explicit CmId(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  // Takes ownership of `id` (rdma_destroy_id in Release) and points its context at this.
  void Attach(EventChannel* ch, Napi::Object chJs, rdma_cm_id* id);
  rdma_cm_id* id() const { return id_; }
  // Events read for this id (the listening id for CONNECT_REQUEST, as librdmacm counts them)
  // and not yet acknowledged: rdma_destroy_id waits for them forever.
  int unacked = 0;
  // The CM QP's state now (-1 without one), and the change since `before`, recorded.
  int QpState() const;
  void NoteQp(const char* during, int before, int event = -1);
  // The QueuePair wrapping id->qp, if any (forgotten when it is destroyed).
  class QueuePair* qp = nullptr;

 private:
  int Release(bool force) override;
  Napi::Value Verbs(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Info(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value BindAddr(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value ResolveAddr(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value ResolveRoute(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Listen(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value CreateQp(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value DestroyQp(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Connect(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Accept(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Reject(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Disconnect(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value InitQpAttr(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value JoinMulticast(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value LeaveMulticast(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value TakeQpChanges(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Unacked(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Destroy(const Napi::CallbackInfo& info, const char* verb);
  rdma_cm_id* id_ = nullptr;
  std::vector<QpChange> changes_;
};

class CmEvent : public Napi::ObjectWrap<CmEvent>, public Resource {
 public:
  static constexpr const char* kName = "CmEvent";
  static constexpr const napi_type_tag& kTag = kCmEventTag;
  static Napi::Function Define(Napi::Env env);
  explicit CmEvent(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  // `counted`: the id whose rdma_destroy_id waits for this event's acknowledgement.
  void Attach(CmId* counted, Napi::Object countedJs, rdma_cm_event* ev);

 private:
  int Release(bool force) override;
  Napi::Value Ack(const Napi::CallbackInfo& info, const char* verb);
  rdma_cm_event* ev_ = nullptr;
  CmId* counted_ = nullptr;
};

// The module functions: createEventChannel() and getAddrInfo(node, service, hints).
void DefineCmExports(Napi::Env env, Napi::Object exports);
// struct sockaddr from { addr: "10.77.0.1" | "fe80::1", port } (IPv4 or IPv6 text).
bool ReadSockaddr(const Arg& arg, Napi::Value v, const std::string& name, sockaddr_storage* out, bool optional);
Napi::Value SockaddrObject(Napi::Env env, const sockaddr* sa);

// One ObjectWrap per verbs object, named after the C struct it owns. Each checks `this` and
// its state at the top of every method (Method/Self in common.h), releases its C object
// in an idempotent destroy that the finalizer also runs, and cannot be copied or moved.
#pragma once

#include "common.h"

// Pending waits on one fd (a completion channel or a device's async event fd), resolved on
// the JS thread with what `read` returns, or null when the timeout passes first.
class FdWaits {
 public:
  // Reads one event without blocking; false when there is none yet.
  using Reader = std::function<bool(Napi::Env, Napi::Value* out)>;
  Napi::Value Wait(Napi::Env env, Napi::Object owner, int fd, double timeoutMs, Reader read);
  void CancelAll(Napi::Env env);

 private:
  struct Pending {
    Napi::Promise::Deferred deferred;
    Napi::ObjectReference owner;  // keeps the waiting object alive
    int fd;
    double deadlineMs;  // < 0: none
    Reader read;
    uint64_t watchId;
  };
  void Arm(Napi::Env env, uint64_t key);
  void Fire(Napi::Env env, uint64_t key, bool ready);
  std::map<uint64_t, Pending> pending_;
  uint64_t nextKey_ = 1;
};

class Context : public Napi::ObjectWrap<Context>, public Resource {
 public:
  static constexpr const char* kName = "Context";
  static constexpr const napi_type_tag& kTag = kContextTag;
  static Napi::Function Define(Napi::Env env);
  explicit Context(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(ibv_context* ctx);
  // A context librdmacm opened (rdma_cm_id.verbs): used like any other, never closed here.
  void AttachBorrowed(ibv_context* ctx);
  ibv_context* ctx() const { return ctx_; }

 private:
  int Release(bool force) override;
  Napi::Value QueryDevice(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value QueryPort(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value QueryGid(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value QueryGidEx(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value QueryGidTable(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value QueryPkey(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value QueryCounters(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value AllocPd(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value CreateCq(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value CreateCompChannel(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value GetAsyncEvent(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Close(const Napi::CallbackInfo& info, const char* verb);
  bool ReadAsyncEvent(Napi::Env env, Napi::Value* out);
  ibv_context* ctx_ = nullptr;
  bool borrowed_ = false;
  FdWaits asyncWaits_;
  Napi::Env env_;
};

class ProtectionDomain : public Napi::ObjectWrap<ProtectionDomain>, public Resource {
 public:
  static constexpr const char* kName = "ProtectionDomain";
  static constexpr const napi_type_tag& kTag = kPdTag;
  static Napi::Function Define(Napi::Env env);
  explicit ProtectionDomain(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(Context* ctx, Napi::Object ctxJs, ibv_pd* pd);
  // librdmacm's PD of a device (rdma_cm_id.pd): used like any other, never deallocated here.
  void AttachBorrowed(Context* ctx, Napi::Object ctxJs, ibv_pd* pd) {
    borrowed_ = true;
    Attach(ctx, ctxJs, pd);
  }
  Context* context() const { return context_; }
  ibv_pd* pd() const { return pd_; }

 private:
  int Release(bool force) override;
  Napi::Value RegMr(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value CreateQp(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value CreateAh(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Dealloc(const Napi::CallbackInfo& info, const char* verb);
  ibv_pd* pd_ = nullptr;
  Context* context_ = nullptr;
  bool borrowed_ = false;
};

class MemoryRegion : public Napi::ObjectWrap<MemoryRegion>, public Resource {
 public:
  static constexpr const char* kName = "MemoryRegion";
  static constexpr const napi_type_tag& kTag = kMrTag;
  static Napi::Function Define(Napi::Env env);
  explicit MemoryRegion(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(ProtectionDomain* pd, Napi::Object pdJs, ibv_mr* mr, Napi::ArrayBuffer buffer);
  // Whether [addr, addr+len) lies inside this MR's registered bytes.
  bool Covers(uint64_t addr, uint64_t len) const;

 private:
  int Release(bool force) override;
  Napi::Value Dereg(const Napi::CallbackInfo& info, const char* verb);
  ibv_mr* mr_ = nullptr;
  // The V8-owned memory the NIC may write into: referenced until ibv_dereg_mr succeeds.
  Napi::Reference<Napi::ArrayBuffer> buffer_;
  VerbsAddon* addon_ = nullptr;
};

class CompletionChannel;

class CompletionQueue : public Napi::ObjectWrap<CompletionQueue>, public Resource {
 public:
  static constexpr const char* kName = "CompletionQueue";
  static constexpr const napi_type_tag& kTag = kCqTag;
  static Napi::Function Define(Napi::Env env);
  explicit CompletionQueue(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(Context* ctx, Napi::Object ctxJs, CompletionChannel* ch, Napi::Object chJs, ibv_cq* cq);
  ibv_cq* cq() const { return cq_; }
  Context* context() const { return context_; }
  // Counts an event read with ibv_get_cq_event (destroy acknowledges what is left).
  void EventRead() { eventsRead_++; }

  // Values per completion in the Uint32Array that poll() fills.
  static constexpr uint32_t kWcWords = 14;
  Napi::Value PollBound(Napi::Env env, const char* verb, napi_value numEntries);

 private:
  int Release(bool force) override;
  Napi::Value Poll(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value BindPollOut(const Napi::CallbackInfo& info, const char* verb);
  static int NumEntries(Napi::Env env, const char* verb, napi_value v);
  static uint32_t* OutArray(Napi::Env env, const char* verb, napi_value out, size_t* length);
  int Fill(Napi::Env env, const char* verb, int n, uint32_t* out, size_t length);
  Napi::Value ReqNotify(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value AckEvents(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Destroy(const Napi::CallbackInfo& info, const char* verb);
  ibv_cq* cq_ = nullptr;
  Context* context_ = nullptr;
  uint64_t eventsRead_ = 0, eventsAcked_ = 0;
  std::vector<ibv_wc> wcs_;
  Napi::ObjectReference pollOut_;  // bindPollOut's array, kept alive while bound
  uint32_t* pollOutData_ = nullptr;
  size_t pollOutLength_ = 0;
};

class CompletionChannel : public Napi::ObjectWrap<CompletionChannel>, public Resource {
 public:
  static constexpr const char* kName = "CompletionChannel";
  static constexpr const napi_type_tag& kTag = kChannelTag;
  static Napi::Function Define(Napi::Env env);
  explicit CompletionChannel(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(Context* ctx, Napi::Object ctxJs, ibv_comp_channel* ch);
  ibv_comp_channel* channel() const { return ch_; }
  Context* context() const { return context_; }

 private:
  int Release(bool force) override;
  Napi::Value GetCqEvent(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Destroy(const Napi::CallbackInfo& info, const char* verb);
  bool ReadEvent(Napi::Env env, Napi::Value* out);
  ibv_comp_channel* ch_ = nullptr;
  Context* context_ = nullptr;
  FdWaits waits_;
  Napi::Env env_;
};

class AddressHandle : public Napi::ObjectWrap<AddressHandle>, public Resource {
 public:
  static constexpr const char* kName = "AddressHandle";
  static constexpr const napi_type_tag& kTag = kAhTag;
  static Napi::Function Define(Napi::Env env);
  explicit AddressHandle(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(ProtectionDomain* pd, Napi::Object pdJs, ibv_ah* ah);
  ibv_ah* ah() const { return ah_; }

 private:
  int Release(bool force) override;
  Napi::Value Destroy(const Napi::CallbackInfo& info, const char* verb);
  ibv_ah* ah_ = nullptr;
};

class CmId;

// struct ibv_qp_init_attr read from JS, with the CQ objects it names.
struct QpInit {
  ibv_qp_init_attr attr;
  CompletionQueue* scq;
  CompletionQueue* rcq;
};

class QueuePair : public Napi::ObjectWrap<QueuePair>, public Resource {
 public:
  static constexpr const char* kName = "QueuePair";
  static constexpr const napi_type_tag& kTag = kQpTag;
  static Napi::Function Define(Napi::Env env);
  explicit QueuePair(const Napi::CallbackInfo& info);
  void Finalize(Napi::Env env) override { ForceDestroy(); }
  void Attach(ProtectionDomain* pd, Napi::Object pdJs, CompletionQueue* scq, Napi::Object scqJs, CompletionQueue* rcq,
              Napi::Object rcqJs, ibv_qp* qp);
  // { send_cq, recv_cq, cap, qp_type, sq_sig_all } → QpInit (CQs checked: live, of `ctx`).
  static QpInit ReadInit(const Arg& arg, Napi::Value init, Context* ctx);
  // Attach, then the qp_num and the cap the create call wrote back as properties.
  void AttachCreated(ProtectionDomain* pd, Napi::Object pdJs, const QpInit& in, ibv_qp* qp);
  // struct ibv_qp_attr as the object query() returns.
  static Napi::Object AttrObject(Napi::Env env, const ibv_qp_attr& a);
#ifdef VERBSLAB_HAVE_RDMACM
  // A QP made by rdma_create_qp: destroying it clears id->qp, as rdma_destroy_qp does.
  void AttachCm(CmId* id, Napi::Object idJs);
  void ForgetCmId() { cmId_ = nullptr; }
  Napi::Value DestroyFromCm(Napi::Env env, const char* verb);
#endif

  // One WR packed by the TypeScript layer into the Float64Arrays bound with bindPacked:
  //   send: wr_id, opcode, send_flags, imm_data, num_sge, has_rdma, rdma.remote_addr,
  //         rdma.rkey, then num_sge × (addr, length, lkey)
  //   recv: wr_id, num_sge, then num_sge × (addr, length, lkey)
  static constexpr uint32_t kPackedSges = 4;
  static constexpr uint32_t kSendHead = 8, kRecvHead = 2;
  // The functions bindPacked returns: post the WR packed in the bound arrays; `wr` takes the
  // list path (and its errors) when the words fail a check.
  Napi::Value PostSendBound(Napi::Env env, const char* verb, napi_value wr);
  Napi::Value PostRecvBound(Napi::Env env, const char* verb, napi_value wr);

 private:
  int Release(bool force) override;
  Napi::Value Modify(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value Query(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value PostSend(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value PostRecv(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value BindPacked(const Napi::CallbackInfo& info, const char* verb);
  Napi::Value PostSendList(Napi::Env env, const char* verb, Napi::Value wrs);
  Napi::Value PostRecvList(Napi::Env env, const char* verb, Napi::Value wrs);
  Napi::Value Destroy(const Napi::CallbackInfo& info, const char* verb);
  ibv_qp* qp_ = nullptr;
  VerbsAddon* addon_ = nullptr;
  CmId* cmId_ = nullptr;
  // Scratch reused across posts (no allocation per WR in the steady state).
  std::vector<ibv_send_wr> sendWrs_;
  std::vector<ibv_recv_wr> recvWrs_;
  std::vector<ibv_sge> sges_;
  std::vector<size_t> sgeStart_;
  // bindPacked's arrays, kept alive while bound.
  Napi::ObjectReference sendPacked_, recvPacked_;
  const double* sendWords_ = nullptr;
  const double* recvWords_ = nullptr;
  size_t sendCount_ = 0, recvCount_ = 0;
  int firstBad_ = -1;
  std::string badReason_, badAttribute_;
  int badUdAh_ = -1;  // firstBad_ is a UD send without a live AH: 0 none given, 1 destroyed (why "ud-ah")
  void ParseSend(const Arg& arg, Napi::Array list, bool verbose);
  void ParseRecv(const Arg& arg, Napi::Array list, bool verbose);
};

// struct ibv_ah_attr from { dlid, sl, ..., grh: { dgid, ... } } (absent fields are 0).
void ReadAhAttr(const Arg& arg, Napi::Value v, const std::string& name, ibv_ah_attr* out);
Napi::Object AhAttrObject(Napi::Env env, const ibv_ah_attr& a);
// Throws EINVAL unless `this` lives; shared by the Destroy methods.
Napi::Value DestroyResult(Napi::Env env, const char* verb, int err, const std::string& what);

// QueuePair (struct ibv_qp): modify, query, post.
#include <cerrno>
#include <cmath>

#include "objects.h"
#ifdef VERBSLAB_HAVE_RDMACM
#include "cm.h"
#endif

Napi::Function QueuePair::Define(Napi::Env env) {
  return DefineVerbsClass<QueuePair>(env, "QueuePair",
                                     {
                                         {"modify", "ibv_modify_qp", Method<QueuePair, &QueuePair::Modify>},
                                         {"query", "ibv_query_qp", Method<QueuePair, &QueuePair::Query>},
                                         {"postSend", "ibv_post_send", Method<QueuePair, &QueuePair::PostSend>},
                                         {"postRecv", "ibv_post_recv", Method<QueuePair, &QueuePair::PostRecv>},
                                         {"bindPacked", "ibv_post_send", Method<QueuePair, &QueuePair::BindPacked>},
                                         {"destroy", "ibv_destroy_qp", Method<QueuePair, &QueuePair::Destroy>},
                                     });
}

QueuePair::QueuePair(const Napi::CallbackInfo& info) : Napi::ObjectWrap<QueuePair>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "QueuePair objects come from createQp()");
  TagWrap(this, info);
}

void QueuePair::Attach(ProtectionDomain* pd, Napi::Object pdJs, CompletionQueue* scq, Napi::Object scqJs,
                       CompletionQueue* rcq, Napi::Object rcqJs, ibv_qp* qp) {
  qp_ = qp;
  addon_ = AddonOf(pdJs.Env());
  DependOn(pd, pdJs);
  DependOn(scq, scqJs);
  if (rcq != scq) DependOn(rcq, rcqJs);
}

int QueuePair::Release(bool force) {
  int err = ErrnoOf(ibv_destroy_qp(qp_));
  if (err != 0) return err;
  qp_ = nullptr;
#ifdef VERBSLAB_HAVE_RDMACM
  // What rdma_destroy_qp does besides ibv_destroy_qp (the CQs are the caller's, never
  // librdmacm's: ReadInit requires both).
  if (cmId_ != nullptr) {
    if (cmId_->id() != nullptr) cmId_->id()->qp = nullptr;
    cmId_->qp = nullptr;
    cmId_ = nullptr;
  }
#endif
  return 0;
}

namespace {
CompletionQueue* CqArg(Napi::Env env, const char* verb, Napi::Value v, const char* name, Context* ctx) {
  // libibverbs 44 dereferences recv_cq unchecked: a missing CQ must never reach it.
  if (v.IsUndefined() || v.IsNull()) ThrowVerbs(env, verb, EINVAL, std::string(name) + " is required", name);
  if (!v.IsObject() || !v.As<Napi::Object>().CheckTypeTag(&kCqTag)) {
    ThrowForeign(env, verb, name, "CQ");
  }
  CompletionQueue* cq = CompletionQueue::Unwrap(v.As<Napi::Object>());
  if (cq->destroyed()) ThrowVerbs(env, verb, EINVAL, std::string(name) + " was already destroyed", name);
  if (cq->context() != ctx) ThrowVerbs(env, verb, EINVAL, std::string(name) + " belongs to another device", name);
  return cq;
}

Napi::Object CapObject(Napi::Env env, const ibv_qp_cap& c) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("max_send_wr", Napi::Number::New(env, c.max_send_wr));
  o.Set("max_recv_wr", Napi::Number::New(env, c.max_recv_wr));
  o.Set("max_send_sge", Napi::Number::New(env, c.max_send_sge));
  o.Set("max_recv_sge", Napi::Number::New(env, c.max_recv_sge));
  o.Set("max_inline_data", Napi::Number::New(env, c.max_inline_data));
  return o;
}
}  // namespace

QpInit QueuePair::ReadInit(const Arg& arg, Napi::Value initV, Context* ctx) {
  Napi::Env env = arg.env;
  const char* verb = arg.verb;
  Napi::Object init = arg.Obj(initV, "init_attr");
  QpInit in;
  in.scq = CqArg(env, verb, init.Get("send_cq"), "send_cq", ctx);
  in.rcq = CqArg(env, verb, init.Get("recv_cq"), "recv_cq", ctx);
  ibv_qp_init_attr& a = in.attr;
  memset(&a, 0, sizeof a);
  a.send_cq = in.scq->cq();
  a.recv_cq = in.rcq->cq();
  Napi::Object cap = arg.Obj(init.Get("cap"), "cap");  // required, as in the contract's QpInitAttr
  a.cap.max_send_wr = arg.U32(cap.Get("max_send_wr"), "cap.max_send_wr", true);
  a.cap.max_recv_wr = arg.U32(cap.Get("max_recv_wr"), "cap.max_recv_wr", true);
  a.cap.max_send_sge = arg.U32(cap.Get("max_send_sge"), "cap.max_send_sge", true);
  a.cap.max_recv_sge = arg.U32(cap.Get("max_recv_sge"), "cap.max_recv_sge", true);
  a.cap.max_inline_data = arg.U32(cap.Get("max_inline_data"), "cap.max_inline_data", true);
  uint32_t type = arg.U32(init.Get("qp_type"), "qp_type");
  // XRC receive QPs need ibv_create_qp_ex with an XRC domain; other numbers are not QP
  // types at all. Both are refused here rather than handed to code paths that expect more.
  if (type != IBV_QPT_RC && type != IBV_QPT_UC && type != IBV_QPT_UD && type != IBV_QPT_RAW_PACKET &&
      type != IBV_QPT_XRC_SEND) {
    ThrowVerbs(env, verb, type == IBV_QPT_XRC_RECV ? EOPNOTSUPP : EINVAL,
               "qp_type " + std::to_string(type) + " cannot be created with ibv_create_qp here", "qp_type");
  }
  a.qp_type = static_cast<ibv_qp_type>(type);
  a.sq_sig_all = arg.I32(init.Get("sq_sig_all"), "sq_sig_all", true);
  return in;
}

void QueuePair::AttachCreated(ProtectionDomain* pd, Napi::Object pdJs, const QpInit& in, ibv_qp* qp) {
  Napi::Env env = pdJs.Env();
  Attach(pd, pdJs, in.scq, in.scq->Value(), in.rcq, in.rcq->Value(), qp);
  Napi::Object obj = Value();
  obj.Set("qp_num", Napi::Number::New(env, qp->qp_num));
  obj.Set("cap", CapObject(env, in.attr.cap));  // what the create call wrote back
}

#ifdef VERBSLAB_HAVE_RDMACM
void QueuePair::AttachCm(CmId* id, Napi::Object idJs) {
  cmId_ = id;
  DependOn(id, idJs);
}

// rdma_destroy_qp(id): ibv_destroy_qp's errno (EBUSY while attached to a multicast group, …)
// instead of librdmacm's void.
Napi::Value QueuePair::DestroyFromCm(Napi::Env env, const char* verb) {
  return DestroyResult(env, verb, Resource::Destroy(),
                       "the QP is attached to a multicast group: rdma_leave_multicast first");
}
#endif

Napi::Value QueuePair::Destroy(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Resource::Destroy(), "");
}

// modify(attr, mask): reads only the fields `mask` names (absent ones are 0, as in a zeroed
// struct) and hands the call to libibverbs unchanged: the kernel decides what is legal.
Napi::Value QueuePair::Modify(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  // The mask is read first, as the simulator does (sim/modify.ts): the same call gives the same error.
  uint32_t mask = arg.U32(info[1], "attr_mask");
  Napi::Object o = arg.Obj(info[0], "attr");
  // The fields: a type error names the argument's path (attr.qp_state, as the simulator's
  // TypeError does), an out-of-range value the field (port_num, as its EINVAL's attribute).
  arg.typePrefix = "attr.";
  ibv_qp_attr a;
  memset(&a, 0, sizeof a);
  auto has = [&](int bit) { return (mask & static_cast<uint32_t>(bit)) != 0; };
  if (has(IBV_QP_STATE)) a.qp_state = static_cast<ibv_qp_state>(arg.U32(o.Get("qp_state"), "qp_state", true));
  if (has(IBV_QP_CUR_STATE)) {
    a.cur_qp_state = static_cast<ibv_qp_state>(arg.U32(o.Get("cur_qp_state"), "cur_qp_state", true));
  }
  if (has(IBV_QP_EN_SQD_ASYNC_NOTIFY)) {
    a.en_sqd_async_notify = arg.U8(o.Get("en_sqd_async_notify"), "en_sqd_async_notify", true);
  }
  if (has(IBV_QP_ACCESS_FLAGS)) a.qp_access_flags = arg.U32(o.Get("qp_access_flags"), "qp_access_flags", true);
  if (has(IBV_QP_PKEY_INDEX)) a.pkey_index = arg.U16(o.Get("pkey_index"), "pkey_index", true);
  if (has(IBV_QP_PORT)) a.port_num = arg.U8(o.Get("port_num"), "port_num", true);
  if (has(IBV_QP_QKEY)) a.qkey = arg.U32(o.Get("qkey"), "qkey", true);
  if (has(IBV_QP_AV)) ReadAhAttr(arg, o.Get("ah_attr"), "ah_attr", &a.ah_attr);
  if (has(IBV_QP_PATH_MTU)) a.path_mtu = static_cast<ibv_mtu>(arg.U32(o.Get("path_mtu"), "path_mtu", true));
  if (has(IBV_QP_TIMEOUT)) a.timeout = arg.U8(o.Get("timeout"), "timeout", true);
  if (has(IBV_QP_RETRY_CNT)) a.retry_cnt = arg.U8(o.Get("retry_cnt"), "retry_cnt", true);
  if (has(IBV_QP_RNR_RETRY)) a.rnr_retry = arg.U8(o.Get("rnr_retry"), "rnr_retry", true);
  if (has(IBV_QP_RQ_PSN)) a.rq_psn = arg.U32(o.Get("rq_psn"), "rq_psn", true);
  if (has(IBV_QP_MAX_QP_RD_ATOMIC)) a.max_rd_atomic = arg.U8(o.Get("max_rd_atomic"), "max_rd_atomic", true);
  if (has(IBV_QP_ALT_PATH)) {
    ReadAhAttr(arg, o.Get("alt_ah_attr"), "alt_ah_attr", &a.alt_ah_attr);
    a.alt_pkey_index = arg.U16(o.Get("alt_pkey_index"), "alt_pkey_index", true);
    a.alt_port_num = arg.U8(o.Get("alt_port_num"), "alt_port_num", true);
    a.alt_timeout = arg.U8(o.Get("alt_timeout"), "alt_timeout", true);
  }
  if (has(IBV_QP_MIN_RNR_TIMER)) a.min_rnr_timer = arg.U8(o.Get("min_rnr_timer"), "min_rnr_timer", true);
  if (has(IBV_QP_SQ_PSN)) a.sq_psn = arg.U32(o.Get("sq_psn"), "sq_psn", true);
  if (has(IBV_QP_MAX_DEST_RD_ATOMIC)) {
    a.max_dest_rd_atomic = arg.U8(o.Get("max_dest_rd_atomic"), "max_dest_rd_atomic", true);
  }
  if (has(IBV_QP_PATH_MIG_STATE)) {
    a.path_mig_state = static_cast<ibv_mig_state>(arg.U32(o.Get("path_mig_state"), "path_mig_state", true));
  }
  if (has(IBV_QP_CAP)) {
    Napi::Value cv = o.Get("cap");
    if (!cv.IsUndefined()) {
      Napi::Object c = arg.Obj(cv, "cap");
      a.cap.max_send_wr = arg.U32(c.Get("max_send_wr"), "cap.max_send_wr", true);
      a.cap.max_recv_wr = arg.U32(c.Get("max_recv_wr"), "cap.max_recv_wr", true);
      a.cap.max_send_sge = arg.U32(c.Get("max_send_sge"), "cap.max_send_sge", true);
      a.cap.max_recv_sge = arg.U32(c.Get("max_recv_sge"), "cap.max_recv_sge", true);
      a.cap.max_inline_data = arg.U32(c.Get("max_inline_data"), "cap.max_inline_data", true);
    }
  }
  if (has(IBV_QP_DEST_QPN)) a.dest_qp_num = arg.U32(o.Get("dest_qp_num"), "dest_qp_num", true);
  if (has(IBV_QP_RATE_LIMIT)) a.rate_limit = arg.U32(o.Get("rate_limit"), "rate_limit", true);
  int err = ibv_modify_qp(qp_, &a, static_cast<int>(mask));
  if (err) ThrowVerbs(env, verb, ErrnoOf(err));
  return env.Undefined();
}

Napi::Object QueuePair::AttrObject(Napi::Env env, const ibv_qp_attr& a) {
  Napi::Object o = Napi::Object::New(env);
  auto num = [&](const char* k, double v) { o.Set(k, Napi::Number::New(env, v)); };
  num("qp_state", a.qp_state);
  num("cur_qp_state", a.cur_qp_state);
  num("path_mtu", a.path_mtu);
  num("path_mig_state", a.path_mig_state);
  num("qkey", a.qkey);
  num("rq_psn", a.rq_psn);
  num("sq_psn", a.sq_psn);
  num("dest_qp_num", a.dest_qp_num);
  num("qp_access_flags", a.qp_access_flags);
  o.Set("cap", CapObject(env, a.cap));
  o.Set("ah_attr", AhAttrObject(env, a.ah_attr));
  o.Set("alt_ah_attr", AhAttrObject(env, a.alt_ah_attr));
  num("pkey_index", a.pkey_index);
  num("alt_pkey_index", a.alt_pkey_index);
  num("en_sqd_async_notify", a.en_sqd_async_notify);
  num("sq_draining", a.sq_draining);
  num("max_rd_atomic", a.max_rd_atomic);
  num("max_dest_rd_atomic", a.max_dest_rd_atomic);
  num("min_rnr_timer", a.min_rnr_timer);
  num("port_num", a.port_num);
  num("timeout", a.timeout);
  num("retry_cnt", a.retry_cnt);
  num("rnr_retry", a.rnr_retry);
  num("alt_port_num", a.alt_port_num);
  num("alt_timeout", a.alt_timeout);
  num("rate_limit", a.rate_limit);
  return o;
}

// query(mask) → { attr, init_attr }
Napi::Value QueuePair::Query(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  uint32_t mask = Arg{env, verb}.U32(info[0], "attr_mask");
  ibv_qp_attr a;
  ibv_qp_init_attr init;
  memset(&a, 0, sizeof a);
  memset(&init, 0, sizeof init);
  int err = ibv_query_qp(qp_, &a, static_cast<int>(mask), &init);
  if (err) ThrowVerbs(env, verb, ErrnoOf(err));
  Napi::Object o = AttrObject(env, a);
  Napi::Object i = Napi::Object::New(env);
  i.Set("qp_type", Napi::Number::New(env, init.qp_type));
  i.Set("sq_sig_all", Napi::Number::New(env, init.sq_sig_all));
  i.Set("cap", CapObject(env, init.cap));
  Napi::Object result = Napi::Object::New(env);
  result.Set("attr", o);
  result.Set("init_attr", i);
  return result;
}

namespace {
// Field names for errors. The fast pass names fields without their index ("wr.opcode");
// only when it fails does PostSend/PostRecv parse again with full paths ("wr[2].opcode"),
// so the common case builds no strings.
struct Names {
  bool verbose;
  uint32_t i = 0;
  std::string operator()(const char* field) const {
    return verbose ? "wr[" + std::to_string(i) + "]." + field : std::string("wr.") + field;
  }
  std::string Sge(uint32_t j) const {
    return verbose ? "wr[" + std::to_string(i) + "].sg_list[" + std::to_string(j) + "]" : std::string("sge");
  }
  std::string Sge(uint32_t j, const char* field) const {
    return verbose ? "wr[" + std::to_string(i) + "].sg_list[" + std::to_string(j) + "]." + field
                   : std::string("sge.") + field;
  }
};

// Appends a WR's sg_list to `sges`; returns how many.
int ReadSgList(const Arg& arg, VerbsAddon* ad, Napi::Object w, const Names& n, std::vector<ibv_sge>& sges) {
  Napi::Value v = ad->Get(w, VerbsAddon::kSgList);
  if (v.IsUndefined() || v.IsNull()) return 0;
  if (!v.IsArray()) ThrowArgType(arg.env, arg.verb, n("sg_list"), "array", v);
  Napi::Array list = v.As<Napi::Array>();
  uint32_t count = list.Length();
  for (uint32_t j = 0; j < count; j++) {
    Napi::Value sv = list.Get(j);
    if (!sv.IsObject()) ThrowArgType(arg.env, arg.verb, n.Sge(j), "object", sv);
    Napi::Object s = sv.As<Napi::Object>();
    ibv_sge sge;
    sge.addr = arg.Big(ad->Get(s, VerbsAddon::kAddr), n.Sge(j, "addr"));
    sge.length = arg.U32(ad->Get(s, VerbsAddon::kLength), n.Sge(j, "length"));
    sge.lkey = arg.U32(ad->Get(s, VerbsAddon::kLkey), n.Sge(j, "lkey"));
    sges.push_back(sge);
  }
  return static_cast<int>(count);
}

// Throws with bad_wr's index (the first WR not posted) when a post failed.
template <typename Wr>
void CheckPost(Napi::Env env, const char* verb, int ret, Wr* first, Wr* bad) {
  if (ret == 0) return;
  int index = bad != nullptr && first != nullptr ? static_cast<int>(bad - first) : 0;
  ThrowVerbs(env, verb, ErrnoOf(ret), "", "", index);
}
}  // namespace

// Reads every send WR into sendWrs_/sges_ and finds the first one that must not reach
// libibverbs (firstBad_, with its reason). Type errors throw.
void QueuePair::ParseSend(const Arg& arg, Napi::Array list, bool verbose) {
  Napi::Env env = arg.env;
  VerbsAddon* ad = addon_;
  uint32_t n = list.Length();
  sendWrs_.assign(n, ibv_send_wr{});
  sgeStart_.assign(n, 0);
  sges_.clear();
  firstBad_ = -1;
  badUdAh_ = -1;
  bool ud = qp_->qp_type == IBV_QPT_UD;
  Names name{verbose};
  for (uint32_t i = 0; i < n; i++) {
    name.i = i;
    Napi::Value wv = list.Get(i);
    if (!wv.IsObject()) ThrowArgType(env, arg.verb, "wr[" + std::to_string(i) + "]", "object", wv);
    Napi::Object w = wv.As<Napi::Object>();
    ibv_send_wr& wr = sendWrs_[i];
    wr.wr_id = arg.Safe(ad->Get(w, VerbsAddon::kWrId), name("wr_id"), true);
    wr.opcode = static_cast<ibv_wr_opcode>(arg.U32(ad->Get(w, VerbsAddon::kOpcode), name("opcode")));
    wr.send_flags = arg.U32(ad->Get(w, VerbsAddon::kSendFlags), name("send_flags"), true);
    wr.imm_data = arg.U32(ad->Get(w, VerbsAddon::kImmData), name("imm_data"), true);  // raw, as written
    sgeStart_[i] = sges_.size();
    wr.num_sge = ReadSgList(arg, ad, w, name, sges_);
    Napi::Value udv = ad->Get(w, VerbsAddon::kUd);
    AddressHandle* ah = nullptr;
    if (!udv.IsUndefined()) {
      Napi::Object u = arg.Obj(udv, name("ud"));
      Napi::Value ahv = ad->Get(u, VerbsAddon::kAh);
      // Anything but an AH of this addon is no AH (on a UD QP, EINVAL at this WR, as the
      // simulator says); other QP types never read it.
      if (ahv.IsObject() && ahv.As<Napi::Object>().CheckTypeTag(&kAhTag)) {
        ah = AddressHandle::Unwrap(ahv.As<Napi::Object>());
      }
      if (ud) {
        wr.wr.ud.remote_qpn = arg.U32(ad->Get(u, VerbsAddon::kRemoteQpn), name("ud.remote_qpn"), true);
        wr.wr.ud.remote_qkey = arg.U32(ad->Get(u, VerbsAddon::kRemoteQkey), name("ud.remote_qkey"), true);
      }
    }
    if (ud) {
      if (ah == nullptr || ah->destroyed()) {
        if (firstBad_ < 0) {
          firstBad_ = static_cast<int>(i);
          badAttribute_ = Names{true, i}("wr.ud.ah");  // the simulator's name: struct ibv_send_wr's wr.ud.ah
          badReason_.clear();
          badUdAh_ = ah == nullptr ? 0 : 1;
        }
      } else {
        wr.wr.ud.ah = ah->ah();
      }
    } else {
      Napi::Value atomic = ad->Get(w, VerbsAddon::kAtomic);
      if (!atomic.IsUndefined()) {
        Napi::Object a = arg.Obj(atomic, name("atomic"));
        wr.wr.atomic.remote_addr = arg.Big(ad->Get(a, VerbsAddon::kRemoteAddr), name("atomic.remote_addr"));
        wr.wr.atomic.compare_add = arg.Big(ad->Get(a, VerbsAddon::kCompareAdd), name("atomic.compare_add"), true);
        wr.wr.atomic.swap = arg.Big(ad->Get(a, VerbsAddon::kSwap), name("atomic.swap"), true);
        wr.wr.atomic.rkey = arg.U32(ad->Get(a, VerbsAddon::kRkey), name("atomic.rkey"), true);
      } else {
        Napi::Value rdma = ad->Get(w, VerbsAddon::kRdma);
        if (!rdma.IsUndefined()) {
          Napi::Object r = arg.Obj(rdma, name("rdma"));
          wr.wr.rdma.remote_addr = arg.Big(ad->Get(r, VerbsAddon::kRemoteAddr), name("rdma.remote_addr"));
          wr.wr.rdma.rkey = arg.U32(ad->Get(r, VerbsAddon::kRkey), name("rdma.rkey"), true);
        }
      }
    }
    // Inline data is copied by the library from the SGE addresses themselves.
    if ((wr.send_flags & IBV_SEND_INLINE) && firstBad_ < 0) {
      for (int j = 0; j < wr.num_sge; j++) {
        const ibv_sge& s = sges_[sgeStart_[i] + j];
        bool inside = s.length == 0;
        for (const MemoryRegion* mr : ad->liveMrs) inside = inside || mr->Covers(s.addr, s.length);
        if (!inside) {
          firstBad_ = static_cast<int>(i);
          badAttribute_ = Names{true, i}.Sge(static_cast<uint32_t>(j), "addr");
          badReason_ = "inline data is copied from sg_list addresses: they must lie inside a registered MR here";
          badUdAh_ = -1;
          break;
        }
      }
    }
  }
}

// postSend(wrs[]): every WR is read and type-checked before anything is posted. Values that
// rxe itself judges (lkeys, addresses, opcodes, lengths) pass through untouched: they
// become post errors or completion statuses there. Refused here are only the WRs that
// would make libibverbs dereference garbage: a UD send without a live address handle and
// inline data outside every registered MR. Like rxe's own checks, such a WR stops the
// list there: the WRs before it are posted, and err.badWrIndex names it.
Napi::Value QueuePair::PostSend(const Napi::CallbackInfo& info, const char* verb) {
  return PostSendList(info.Env(), verb, info[0]);
}

Napi::Value QueuePair::PostSendList(Napi::Env env, const char* verb, Napi::Value wrs) {
  Arg arg{env, verb};
  if (!wrs.IsArray()) ThrowArgType(env, verb, "wr", "array", wrs);
  Napi::Array list = wrs.As<Napi::Array>();
  try {
    ParseSend(arg, list, false);
  } catch (const Napi::Error&) {
    ParseSend(arg, list, true);  // the same error again, with the WR's index in its name
    throw;
  }
  uint32_t n = static_cast<uint32_t>(sendWrs_.size());
  uint32_t post = firstBad_ >= 0 ? static_cast<uint32_t>(firstBad_) : n;
  for (uint32_t i = 0; i < post; i++) {
    ibv_send_wr& wr = sendWrs_[i];
    wr.sg_list = wr.num_sge > 0 ? &sges_[sgeStart_[i]] : nullptr;
    wr.next = i + 1 < post ? &sendWrs_[i + 1] : nullptr;
  }
  if (post > 0 || n == 0) {
    ibv_send_wr* first = n > 0 ? sendWrs_.data() : nullptr;
    ibv_send_wr* bad = nullptr;
    int ret = ibv_post_send(qp_, first, &bad);  // before reading `bad`
    CheckPost(env, verb, ret, first, bad);
  }
  if (firstBad_ >= 0 && badUdAh_ >= 0) {
    Napi::Object why = Napi::Object::New(env);
    why.Set("kind", "ud-ah");
    why.Set("i", firstBad_);
    why.Set("gone", badUdAh_ == 1);
    ThrowVerbsWhy(env, verb, EINVAL, why, badAttribute_, firstBad_);
  }
  if (firstBad_ >= 0) ThrowVerbs(env, verb, EINVAL, badReason_, badAttribute_, firstBad_);
  return env.Undefined();
}

void QueuePair::ParseRecv(const Arg& arg, Napi::Array list, bool verbose) {
  uint32_t n = list.Length();
  recvWrs_.assign(n, ibv_recv_wr{});
  sgeStart_.assign(n, 0);
  sges_.clear();
  Names name{verbose};
  for (uint32_t i = 0; i < n; i++) {
    name.i = i;
    Napi::Value wv = list.Get(i);
    if (!wv.IsObject()) ThrowArgType(arg.env, arg.verb, "wr[" + std::to_string(i) + "]", "object", wv);
    Napi::Object w = wv.As<Napi::Object>();
    recvWrs_[i].wr_id = arg.Safe(addon_->Get(w, VerbsAddon::kWrId), name("wr_id"), true);
    sgeStart_[i] = sges_.size();
    recvWrs_[i].num_sge = ReadSgList(arg, addon_, w, name, sges_);
  }
}

Napi::Value QueuePair::PostRecv(const Napi::CallbackInfo& info, const char* verb) {
  return PostRecvList(info.Env(), verb, info[0]);
}

Napi::Value QueuePair::PostRecvList(Napi::Env env, const char* verb, Napi::Value wrs) {
  Arg arg{env, verb};
  if (!wrs.IsArray()) ThrowArgType(env, verb, "wr", "array", wrs);
  Napi::Array list = wrs.As<Napi::Array>();
  try {
    ParseRecv(arg, list, false);
  } catch (const Napi::Error&) {
    ParseRecv(arg, list, true);
    throw;
  }
  uint32_t n = static_cast<uint32_t>(recvWrs_.size());
  for (uint32_t i = 0; i < n; i++) {
    recvWrs_[i].sg_list = recvWrs_[i].num_sge > 0 ? &sges_[sgeStart_[i]] : nullptr;
    recvWrs_[i].next = i + 1 < n ? &recvWrs_[i + 1] : nullptr;
  }
  ibv_recv_wr* first = n > 0 ? recvWrs_.data() : nullptr;
  ibv_recv_wr* bad = nullptr;
  int ret = ibv_post_recv(qp_, first, &bad);  // before reading `bad`
  CheckPost(env, verb, ret, first, bad);
  return env.Undefined();
}

// ---- One WR, packed (the TypeScript layer's fast path) ----
//
// The posts that bindPacked returns (postSend(wr), postRecv(wr)): the TypeScript layer has
// read the WR's fields itself (only when each is a plain number, as the common case is) and
// packed them into the bound arrays (layout in objects.h). Here they pass exactly the checks
// the list path makes; anything else — a value out of range or not an integer, more SGEs
// than fit, inline data outside every MR, a UD QP — is handed to the list path with [wr],
// which reads the object again and throws (or posts) exactly as postSend([wr]) would. So the
// fast path can only ever post what the list path would post, and every error comes from one
// place.
namespace {
// Arg::Uint's acceptance rule for a number (NaN and ±Infinity fail the comparisons).
inline bool Fits(double d, double max) {
  uint64_t whole = 0;
  return WholeNumber(d, max + 1, &whole);
}
constexpr double kU32 = 4294967295.0;
constexpr double kSafe = 9007199254740991.0;  // 2^53 - 1: wr_id and addresses as numbers

// The packed words, or false when `v` is not a Float64Array of at least `min` elements.
bool PackedWords(Napi::Value v, size_t min, const double** words, size_t* count) {
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(v.Env(), v, &type, &length, &data, nullptr, nullptr) != napi_ok) return false;
  if (type != napi_float64_array || length < min) return false;
  *words = static_cast<const double*>(data);
  *count = length;
  return true;
}

// Reads n packed SGEs from p; false if one would fail the list path's checks.
bool PackedSges(const double* p, uint32_t n, ibv_sge* out) {
  for (uint32_t j = 0; j < n; j++, p += 3) {
    if (!Fits(p[0], kSafe) || !Fits(p[1], kU32) || !Fits(p[2], kU32)) return false;
    out[j].addr = static_cast<uint64_t>(p[0]);
    out[j].length = static_cast<uint32_t>(p[1]);
    out[j].lkey = static_cast<uint32_t>(p[2]);
  }
  return true;
}

Napi::Array OneWr(Napi::Env env, Napi::Value wr) {
  Napi::Array list = Napi::Array::New(env, 1);
  list.Set(0u, wr);
  return list;
}
}  // namespace

// bindPacked(send: Float64Array, recv: Float64Array) → [postSend(wr), postRecv(wr)]: binds the
// arrays that the returned functions read (layout in objects.h), so that no post reads an
// array (or `this`) from a value (see BoundVerb). The functions read the arrays bound last.
// Referenced until others are bound or the QP is freed; like a registered MR's buffer they
// must not be transferred (detached) while bound (native/index.ts binds private arrays).
Napi::Value QueuePair::BindPacked(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  const double *s = nullptr, *r = nullptr;
  size_t sc = 0, rc = 0;
  if (!PackedWords(info[0], kSendHead, &s, &sc) || !PackedWords(info[1], kRecvHead, &r, &rc)) {
    ThrowType(env, std::string(verb) + ": bindPacked takes two Float64Arrays (send, recv)");
  }
  sendPacked_ = Napi::Persistent(info[0].As<Napi::Object>());
  recvPacked_ = Napi::Persistent(info[1].As<Napi::Object>());
  sendWords_ = s;
  sendCount_ = sc;
  recvWords_ = r;
  recvCount_ = rc;
  Napi::Array fns = Napi::Array::New(env, 2);
  fns.Set(0u, BindVerb<QueuePair, &QueuePair::PostSendBound>(env, this, "postSend", "ibv_post_send"));
  fns.Set(1u, BindVerb<QueuePair, &QueuePair::PostRecvBound>(env, this, "postRecv", "ibv_post_recv"));
  return fns;
}

// The functions bindPacked returns land here, with the arrays it bound (never null then).
Napi::Value QueuePair::PostSendBound(Napi::Env env, const char* verb, napi_value wrv) {
  const double* p = sendWords_;
  size_t count = sendCount_;
  ibv_send_wr wr{};
  ibv_sge sges[kPackedSges];
  bool fast = qp_->qp_type != IBV_QPT_UD && Fits(p[0], kSafe) && Fits(p[1], kU32) && Fits(p[2], kU32) &&
              Fits(p[3], kU32) && Fits(p[4], kPackedSges) && (p[5] == 0 || p[5] == 1);
  uint32_t nsge = fast ? static_cast<uint32_t>(p[4]) : 0;
  fast = fast && count >= kSendHead + 3 * nsge && PackedSges(p + kSendHead, nsge, sges);
  if (fast && p[5] == 1) {
    fast = Fits(p[6], kSafe) && Fits(p[7], kU32);
    wr.wr.rdma.remote_addr = static_cast<uint64_t>(p[6]);
    wr.wr.rdma.rkey = static_cast<uint32_t>(p[7]);
  }
  if (fast) {
    wr.wr_id = static_cast<uint64_t>(p[0]);
    wr.opcode = static_cast<ibv_wr_opcode>(static_cast<uint32_t>(p[1]));
    wr.send_flags = static_cast<uint32_t>(p[2]);
    wr.imm_data = static_cast<uint32_t>(p[3]);  // raw, as written (as the list path)
    wr.num_sge = static_cast<int>(nsge);
    wr.sg_list = nsge > 0 ? sges : nullptr;
    // Inline data is copied from the SGE addresses: outside every MR, the list path refuses it.
    if (wr.send_flags & IBV_SEND_INLINE) {
      for (uint32_t j = 0; j < nsge && fast; j++) {
        bool inside = sges[j].length == 0;
        for (const MemoryRegion* mr : addon_->liveMrs) inside = inside || mr->Covers(sges[j].addr, sges[j].length);
        fast = inside;
      }
    }
  }
  if (!fast) return PostSendList(env, verb, OneWr(env, Napi::Value(env, wrv)));
  ibv_send_wr* bad = nullptr;
  int ret = ibv_post_send(qp_, &wr, &bad);  // before reading `bad`
  CheckPost(env, verb, ret, &wr, bad);
  return Napi::Value();  // undefined, without another Node-API call
}

Napi::Value QueuePair::PostRecvBound(Napi::Env env, const char* verb, napi_value wrv) {
  const double* p = recvWords_;
  size_t count = recvCount_;
  ibv_recv_wr wr{};
  ibv_sge sges[kPackedSges];
  bool fast = Fits(p[0], kSafe) && Fits(p[1], kPackedSges);
  uint32_t nsge = fast ? static_cast<uint32_t>(p[1]) : 0;
  fast = fast && count >= kRecvHead + 3 * nsge && PackedSges(p + kRecvHead, nsge, sges);
  if (!fast) return PostRecvList(env, verb, OneWr(env, Napi::Value(env, wrv)));
  wr.wr_id = static_cast<uint64_t>(p[0]);
  wr.num_sge = static_cast<int>(nsge);
  wr.sg_list = nsge > 0 ? sges : nullptr;
  ibv_recv_wr* bad = nullptr;
  int ret = ibv_post_recv(qp_, &wr, &bad);  // before reading `bad`
  CheckPost(env, verb, ret, &wr, bad);
  return Napi::Value();  // undefined, without another Node-API call
}

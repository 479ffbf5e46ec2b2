// ProtectionDomain (struct ibv_pd): memory registration, QP and AH creation.
#include <cerrno>

#include "objects.h"

Napi::Function ProtectionDomain::Define(Napi::Env env) {
  return DefineVerbsClass<ProtectionDomain>(
      env, "ProtectionDomain",
      {
          {"regMr", "ibv_reg_mr", Method<ProtectionDomain, &ProtectionDomain::RegMr>},
          {"createQp", "ibv_create_qp", Method<ProtectionDomain, &ProtectionDomain::CreateQp>},
          {"createAh", "ibv_create_ah", Method<ProtectionDomain, &ProtectionDomain::CreateAh>},
          {"dealloc", "ibv_dealloc_pd", Method<ProtectionDomain, &ProtectionDomain::Dealloc>},
      });
}

ProtectionDomain::ProtectionDomain(const Napi::CallbackInfo& info) : Napi::ObjectWrap<ProtectionDomain>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "ProtectionDomain objects come from allocPd()");
  TagWrap(this, info);
}

void ProtectionDomain::Attach(Context* ctx, Napi::Object ctxJs, ibv_pd* pd) {
  pd_ = pd;
  context_ = ctx;
  DependOn(ctx, ctxJs);
}

int ProtectionDomain::Release(bool force) {
  if (borrowed_) {
    if (!force) return EINVAL;  // see Dealloc
    pd_ = nullptr;
    return 0;
  }
  int err = ErrnoOf(ibv_dealloc_pd(pd_));
  if (err == 0) pd_ = nullptr;
  return err;
}

Napi::Value ProtectionDomain::Dealloc(const Napi::CallbackInfo& info, const char* verb) {
  if (borrowed_) {
    ThrowVerbs(info.Env(), verb, EINVAL,
               "this is librdmacm's PD (rdma_create_qp without a PD): librdmacm deallocates it, a program never does",
               "pd");
  }
  return DestroyResult(info.Env(), verb, Destroy(), "the PD still has an MR, QP or AH");
}

// regMr(arrayBuffer, byteOffset, length, access): registers V8-owned memory (Electron's
// memory cage forbids external buffers) and keeps the ArrayBuffer alive while registered.
Napi::Value ProtectionDomain::RegMr(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  if (!info[0].IsArrayBuffer()) ThrowArgType(env, verb, "memory", "memory", info[0]);
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  uint64_t offset = arg.Safe(info[1], "offset");
  uint64_t length = arg.Safe(info[2], "length");
  int access = static_cast<int>(arg.U32(info[3], "access"));
  size_t size = buffer.ByteLength();
  if (offset > size || length > size - offset) {
    ThrowVerbs(env, verb, EINVAL, "the range lies outside the ArrayBuffer (" + std::to_string(size) + " bytes)",
               "length");
  }
  auto* base = static_cast<uint8_t*>(buffer.Data());
  void* addr = base != nullptr ? base + offset : nullptr;
  errno = 0;
  ibv_mr* mr = ibv_reg_mr(pd_, addr, length, access);
  if (mr == nullptr) ThrowVerbs(env, verb, errno != 0 ? errno : EINVAL);
  Napi::Object obj = NewInstance(AddonOf(env)->mrCtor);
  MemoryRegion::Unwrap(obj)->Attach(this, Value(), mr, buffer);
  obj.Set("lkey", Napi::Number::New(env, mr->lkey));
  obj.Set("rkey", Napi::Number::New(env, mr->rkey));
  obj.Set("addr", Napi::Number::New(env, static_cast<double>(reinterpret_cast<uintptr_t>(mr->addr))));
  obj.Set("length", Napi::Number::New(env, static_cast<double>(mr->length)));
  return obj;
}

// createQp({ send_cq, recv_cq, cap, qp_type, sq_sig_all }) → QueuePair with qp_num and the
// cap ibv_create_qp wrote back.
Napi::Value ProtectionDomain::CreateQp(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  QpInit in = QueuePair::ReadInit(arg, info[0], context_);
  errno = 0;
  ibv_qp* qp = ibv_create_qp(pd_, &in.attr);
  if (qp == nullptr) ThrowVerbs(env, verb, errno != 0 ? errno : EINVAL);
  Napi::Object obj = NewInstance(AddonOf(env)->qpCtor);
  QueuePair::Unwrap(obj)->AttachCreated(this, Value(), in, qp);
  return obj;
}

Napi::Value ProtectionDomain::CreateAh(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  ibv_ah_attr a;
  ReadAhAttr(arg, info[0], "ah_attr", &a);
  errno = 0;
  ibv_ah* ah = ibv_create_ah(pd_, &a);
  if (ah == nullptr) ThrowVerbs(env, verb, errno != 0 ? errno : EINVAL);
  Napi::Object obj = NewInstance(AddonOf(env)->ahCtor);
  AddressHandle::Unwrap(obj)->Attach(this, Value(), ah);
  return obj;
}

// ---------------------------------------------------------------------------------------
// AddressHandle

Napi::Function AddressHandle::Define(Napi::Env env) {
  return DefineVerbsClass<AddressHandle>(
      env, "AddressHandle",
      {
          {"destroy", "ibv_destroy_ah", Method<AddressHandle, &AddressHandle::Destroy>},
      });
}

AddressHandle::AddressHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<AddressHandle>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "AddressHandle objects come from createAh()");
  TagWrap(this, info);
}

void AddressHandle::Attach(ProtectionDomain* pd, Napi::Object pdJs, ibv_ah* ah) {
  ah_ = ah;
  DependOn(pd, pdJs);
}

int AddressHandle::Release(bool force) {
  int err = ErrnoOf(ibv_destroy_ah(ah_));
  if (err == 0) ah_ = nullptr;
  return err;
}

Napi::Value AddressHandle::Destroy(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Resource::Destroy(), "");
}

// ---------------------------------------------------------------------------------------
// struct ibv_ah_attr in and out

void ReadAhAttr(const Arg& arg, Napi::Value v, const std::string& name, ibv_ah_attr* a) {
  memset(a, 0, sizeof *a);
  if (v.IsUndefined()) return;
  Napi::Object o = arg.Obj(v, name);
  a->dlid = arg.U16(o.Get("dlid"), name + ".dlid", true);
  a->sl = arg.U8(o.Get("sl"), name + ".sl", true);
  a->src_path_bits = arg.U8(o.Get("src_path_bits"), name + ".src_path_bits", true);
  a->static_rate = arg.U8(o.Get("static_rate"), name + ".static_rate", true);
  a->is_global = arg.U8(o.Get("is_global"), name + ".is_global", true);
  a->port_num = arg.U8(o.Get("port_num"), name + ".port_num", true);
  Napi::Value gv = o.Get("grh");
  if (!gv.IsUndefined()) {
    Napi::Object g = arg.Obj(gv, name + ".grh");
    arg.Gid(g.Get("dgid"), name + ".grh.dgid", &a->grh.dgid, true);
    a->grh.flow_label = arg.U32(g.Get("flow_label"), name + ".grh.flow_label", true);
    a->grh.sgid_index = arg.U8(g.Get("sgid_index"), name + ".grh.sgid_index", true);
    a->grh.hop_limit = arg.U8(g.Get("hop_limit"), name + ".grh.hop_limit", true);
    a->grh.traffic_class = arg.U8(g.Get("traffic_class"), name + ".grh.traffic_class", true);
  }
}

Napi::Object AhAttrObject(Napi::Env env, const ibv_ah_attr& a) {
  Napi::Object g = Napi::Object::New(env);
  g.Set("dgid", GidText(a.grh.dgid));
  g.Set("flow_label", Napi::Number::New(env, a.grh.flow_label));
  g.Set("sgid_index", Napi::Number::New(env, a.grh.sgid_index));
  g.Set("hop_limit", Napi::Number::New(env, a.grh.hop_limit));
  g.Set("traffic_class", Napi::Number::New(env, a.grh.traffic_class));
  Napi::Object o = Napi::Object::New(env);
  o.Set("grh", g);
  o.Set("dlid", Napi::Number::New(env, a.dlid));
  o.Set("sl", Napi::Number::New(env, a.sl));
  o.Set("src_path_bits", Napi::Number::New(env, a.src_path_bits));
  o.Set("static_rate", Napi::Number::New(env, a.static_rate));
  o.Set("is_global", Napi::Number::New(env, a.is_global));
  o.Set("port_num", Napi::Number::New(env, a.port_num));
  return o;
}

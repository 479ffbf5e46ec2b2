// Module entry: per-addon state, device discovery, and the class definitions.
#include <cerrno>
#include <cstring>

#include "objects.h"

const napi_type_tag kContextTag = {0x7665726273636f6eULL, 0x0000000000000001ULL};
const napi_type_tag kPdTag = {0x7665726273636f6eULL, 0x0000000000000002ULL};
const napi_type_tag kMrTag = {0x7665726273636f6eULL, 0x0000000000000003ULL};
const napi_type_tag kCqTag = {0x7665726273636f6eULL, 0x0000000000000004ULL};
const napi_type_tag kChannelTag = {0x7665726273636f6eULL, 0x0000000000000005ULL};
const napi_type_tag kQpTag = {0x7665726273636f6eULL, 0x0000000000000006ULL};
const napi_type_tag kAhTag = {0x7665726273636f6eULL, 0x0000000000000007ULL};

bool ConstructedByAddon(const Napi::CallbackInfo& info) {
  return info.Length() == 1 && info[0].IsExternal() &&
         info[0].As<Napi::External<VerbsAddon>>().Data() == AddonOf(info.Env());
}

Napi::Object NewInstance(Napi::FunctionReference& ctor) {
  Napi::Env env = ctor.Env();
  return ctor.New({Napi::External<VerbsAddon>::New(env, AddonOf(env))});
}

// A hot verb (F) as a bare Node-API callback: one napi_get_cb_info for both arguments
// (missing ones read as undefined) and no Napi::CallbackInfo with its wrapper layers: every
// call layer costs in the lab VM, and these run on every poll and post.
// C++ exceptions become JS exceptions, as node-addon-api's own wrapper makes them.
template <Napi::Value (*F)(Napi::Env, VerbsAddon*, napi_value, napi_value)>
napi_value HotVerb(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  void* addon = nullptr;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, &addon) != napi_ok) return nullptr;
  try {
    return F(Napi::Env(env), static_cast<VerbsAddon*>(addon), argv[0], argv[1]);
  } catch (const Napi::Error& e) {
    e.ThrowAsJavaScriptException();
    return nullptr;
  }
}

template <Napi::Value (*F)(Napi::Env, VerbsAddon*, napi_value, napi_value)>
void DefineHotVerb(Napi::Env env, Napi::Object exports, const char* name, VerbsAddon* addon) {
  napi_value fn = nullptr;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, name, NAPI_AUTO_LENGTH, HotVerb<F>, addon, &fn));
  exports.Set(name, Napi::Value(env, fn));
}

VerbsAddon::VerbsAddon(Napi::Env env, Napi::Object exports) {
  contextCtor = Napi::Persistent(Context::Define(env));
  pdCtor = Napi::Persistent(ProtectionDomain::Define(env));
  mrCtor = Napi::Persistent(MemoryRegion::Define(env));
  cqCtor = Napi::Persistent(CompletionQueue::Define(env));
  channelCtor = Napi::Persistent(CompletionChannel::Define(env));
  qpCtor = Napi::Persistent(QueuePair::Define(env));
  ahCtor = Napi::Persistent(AddressHandle::Define(env));
  poller.Start(env);
  DefineAddon(exports, {
                           InstanceMethod("init", &VerbsAddon::SetErrorClass),
                           InstanceMethod("getDeviceList", &VerbsAddon::GetDeviceList),
                           InstanceMethod("openDevice", &VerbsAddon::OpenDevice),
                       });
  // The hot verbs as plain functions taking the object's slot, not `this` (see
  // VerbsAddon::slots), with the addon as the function's data: neither the addon nor the
  // object costs a napi_unwrap. Bare Node-API callbacks (HotVerb).
  DefineHotVerb<PollCq>(env, exports, "pollCq", this);
  DefineHotVerb<PostSendPacked>(env, exports, "postSendPacked", this);
  DefineHotVerb<PostRecvPacked>(env, exports, "postRecvPacked", this);
  exports.Set("WC_WORDS", Napi::Number::New(env, CompletionQueue::kWcWords));
  exports.Set("PACKED_SGES", Napi::Number::New(env, QueuePair::kPackedSges));
}

VerbsAddon::~VerbsAddon() { poller.Stop(); }

// pollCq(slot, num_entries) → count: cq.poll(num_entries, out) into the array bound with
// cq.bindPollOut(out).
Napi::Value VerbsAddon::PollCq(Napi::Env env, VerbsAddon* addon, napi_value slot, napi_value numEntries) {
  const char* verb = "ibv_poll_cq";
  return FromSlot<CompletionQueue>(env, addon, slot, verb)->PollBound(env, verb, numEntries);
}

// postSendPacked(slot, wr) / postRecvPacked(slot, wr): a single WR packed by native/index.ts
// into the arrays bound with qp.bindPacked(send, recv); `wr` itself is read only when the
// packed words do not pass the checks (the general path then throws the usual error).
Napi::Value VerbsAddon::PostSendPacked(Napi::Env env, VerbsAddon* addon, napi_value slot, napi_value wr) {
  const char* verb = "ibv_post_send";
  return FromSlot<QueuePair>(env, addon, slot, verb)->PostSendBound(env, verb, wr);
}

Napi::Value VerbsAddon::PostRecvPacked(Napi::Env env, VerbsAddon* addon, napi_value slot, napi_value wr) {
  const char* verb = "ibv_post_recv";
  return FromSlot<QueuePair>(env, addon, slot, verb)->PostRecvBound(env, verb, wr);
}

// init({ VerbsError }): the TypeScript layer hands over the error class to throw.
Napi::Value VerbsAddon::SetErrorClass(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsObject() || !info[0].As<Napi::Object>().Get("VerbsError").IsFunction()) {
    ThrowType(env, "init({ VerbsError }) expects the VerbsError class");
  }
  verbsError = Napi::Persistent(info[0].As<Napi::Object>().Get("VerbsError").As<Napi::Function>());
  return env.Undefined();
}

// { devices: [{ name, node_guid, node_type, transport_type }], errno }. errno is set when
// ibv_get_device_list returned NULL (ENOSYS: the kernel has no RDMA at all).
Napi::Value VerbsAddon::GetDeviceList(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object result = Napi::Object::New(env);
  Napi::Array devices = Napi::Array::New(env);
  int num = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&num);
  if (list == nullptr) {
    result.Set("errno", Napi::Number::New(env, errno != 0 ? errno : ENODEV));
    result.Set("devices", devices);
    return result;
  }
  for (int i = 0; i < num; i++) {
    Napi::Object d = Napi::Object::New(env);
    d.Set("name", ibv_get_device_name(list[i]));
    d.Set("node_guid", GuidText(ibv_get_device_guid(list[i])));
    d.Set("node_type", Napi::Number::New(env, list[i]->node_type));
    d.Set("transport_type", Napi::Number::New(env, list[i]->transport_type));
    devices.Set(static_cast<uint32_t>(i), d);
  }
  ibv_free_device_list(list);
  result.Set("errno", Napi::Number::New(env, 0));
  result.Set("devices", devices);
  return result;
}

// openDevice(name) → Context (ibv_open_device). ENODEV when no device has that name.
Napi::Value VerbsAddon::OpenDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const char* verb = "ibv_open_device";
  if (!info[0].IsString()) ThrowType(env, "ibv_open_device: the device name must be a string");
  std::string name = info[0].As<Napi::String>().Utf8Value();
  int num = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&num);
  if (list == nullptr) ThrowVerbs(env, "ibv_get_device_list", errno != 0 ? errno : ENODEV, "no RDMA devices");
  ibv_device* dev = nullptr;
  for (int i = 0; i < num; i++) {
    if (name == ibv_get_device_name(list[i])) dev = list[i];
  }
  if (dev == nullptr) {
    ibv_free_device_list(list);
    ThrowVerbs(env, verb, ENODEV, "there is no RDMA device named \"" + name + "\"", "name");
  }
  errno = 0;
  ibv_context* ctx = ibv_open_device(dev);
  int err = errno;
  ibv_free_device_list(list);
  if (ctx == nullptr) ThrowVerbs(env, verb, err != 0 ? err : ENODEV);
  Napi::Object obj = NewInstance(contextCtor);
  Context::Unwrap(obj)->Attach(ctx);
  return obj;
}

Napi::Value DestroyResult(Napi::Env env, const char* verb, int err, const std::string& what) {
  if (err != 0) ThrowVerbs(env, verb, err, err == EBUSY ? what : "");
  return env.Undefined();
}

NODE_API_ADDON(VerbsAddon)

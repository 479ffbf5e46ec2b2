// Module entry: per-addon state, device discovery, and the class definitions.
#include <cerrno>
#include <cstring>

#include "objects.h"
#ifdef VERBSLAB_HAVE_RDMACM
#include "cm.h"
#endif

const napi_type_tag kContextTag = {0x7665726273636f6eULL, 0x0000000000000001ULL};
const napi_type_tag kPdTag = {0x7665726273636f6eULL, 0x0000000000000002ULL};
const napi_type_tag kMrTag = {0x7665726273636f6eULL, 0x0000000000000003ULL};
const napi_type_tag kCqTag = {0x7665726273636f6eULL, 0x0000000000000004ULL};
const napi_type_tag kChannelTag = {0x7665726273636f6eULL, 0x0000000000000005ULL};
const napi_type_tag kQpTag = {0x7665726273636f6eULL, 0x0000000000000006ULL};
const napi_type_tag kAhTag = {0x7665726273636f6eULL, 0x0000000000000007ULL};
const napi_type_tag kEventChannelTag = {0x7665726273636f6eULL, 0x0000000000000008ULL};
const napi_type_tag kCmIdTag = {0x7665726273636f6eULL, 0x0000000000000009ULL};
const napi_type_tag kCmEventTag = {0x7665726273636f6eULL, 0x000000000000000aULL};

bool ConstructedByAddon(const Napi::CallbackInfo& info) {
  return info.Length() == 1 && info[0].IsExternal() &&
         info[0].As<Napi::External<VerbsAddon>>().Data() == AddonOf(info.Env());
}

Napi::Object NewInstance(Napi::FunctionReference& ctor) {
  Napi::Env env = ctor.Env();
  return ctor.New({Napi::External<VerbsAddon>::New(env, AddonOf(env))});
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
#ifdef VERBSLAB_HAVE_RDMACM
  eventChannelCtor = Napi::Persistent(EventChannel::Define(env));
  cmIdCtor = Napi::Persistent(CmId::Define(env));
  cmEventCtor = Napi::Persistent(CmEvent::Define(env));
  DefineCmExports(env, exports);
  exports.Set("RDMACM", Napi::Boolean::New(env, true));
#else
  exports.Set("RDMACM", Napi::Boolean::New(env, false));
#endif
  exports.Set("WC_WORDS", Napi::Number::New(env, CompletionQueue::kWcWords));
  exports.Set("PACKED_SGES", Napi::Number::New(env, QueuePair::kPackedSges));
}

VerbsAddon::~VerbsAddon() {
  poller.Stop();
#ifdef VERBSLAB_HAVE_RDMACM
  if (cmDevices != nullptr) rdma_free_devices(static_cast<ibv_context**>(cmDevices));
#endif
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
  if (!info[0].IsString()) ThrowArgType(env, "ibv_open_device", "name", "string", info[0]);
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

Napi::Value VerbsAddon::BorrowedContext(Napi::Env env, ibv_context* ctx) {
  auto it = borrowedContexts.find(ctx);
  if (it != borrowedContexts.end()) return it->second.Value();
  Napi::Object obj = NewInstance(contextCtor);
  Context::Unwrap(obj)->AttachBorrowed(ctx);
  borrowedContexts.emplace(ctx, Napi::Persistent(obj));
  return obj;
}

Napi::Value VerbsAddon::BorrowedPd(Napi::Env env, ibv_pd* pd) {
  auto it = borrowedPds.find(pd);
  if (it != borrowedPds.end()) return it->second.Value();
  Napi::Object ctxJs = BorrowedContext(env, pd->context).As<Napi::Object>();
  Napi::Object obj = NewInstance(pdCtor);
  ProtectionDomain::Unwrap(obj)->AttachBorrowed(Context::Unwrap(ctxJs), ctxJs, pd);
  borrowedPds.emplace(pd, Napi::Persistent(obj));
  return obj;
}

Napi::Value DestroyResult(Napi::Env env, const char* verb, int err, const std::string& what) {
  if (err != 0) ThrowVerbs(env, verb, err, err == EBUSY ? what : "");
  return env.Undefined();
}

NODE_API_ADDON(VerbsAddon)

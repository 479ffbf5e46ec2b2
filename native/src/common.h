// Shared pieces of the addon: the per-addon state, the Resource base every wrapped verbs
// object derives from, argument readers and the VerbsError thrower.
#pragma once

#include <infiniband/verbs.h>
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "poller.h"

class MemoryRegion;

// Whether d is a whole number in [0, limit) (limit ≤ 2^64), and that number: few
// floating-point operations and no libm, because the lab VM emulates floating point in
// software (a helper call per operation) and this checks every number of every packed post.
inline bool WholeNumber(double d, double limit, uint64_t* out) {
  if (!(d >= 0 && d < limit)) return false;  // also NaN
  *out = static_cast<uint64_t>(d);
  return static_cast<double>(*out) == d;
}

// Per-addon state (no static globals): constructors, the VerbsError class handed over by
// the TypeScript layer, the poller thread, and the live MRs (for inline-data checks).
class VerbsAddon : public Napi::Addon<VerbsAddon> {
 public:
  VerbsAddon(Napi::Env env, Napi::Object exports);
  ~VerbsAddon();

  Napi::FunctionReference contextCtor, pdCtor, mrCtor, cqCtor, channelCtor, qpCtor, ahCtor;
  // rdma_cm (empty when built without librdmacm).
  Napi::FunctionReference eventChannelCtor, cmIdCtor, cmEventCtor;
  // One Context object per ibv_context that librdmacm opened (rdma_cm_id.verbs), kept for the
  // addon's life: librdmacm keeps those contexts open for the process's.
  std::map<const ibv_context*, Napi::ObjectReference> borrowedContexts;
  Napi::Value BorrowedContext(Napi::Env env, ibv_context* ctx);
  // The PD librdmacm allocates per device (rdma_cm_id.pd), for rdma_create_qp without a PD.
  std::map<const ibv_pd*, Napi::ObjectReference> borrowedPds;
  Napi::Value BorrowedPd(Napi::Env env, ibv_pd* pd);
  // rdma_get_devices' list, held from the first CM use to the addon's end: it keeps every
  // device's reference in librdmacm above 0, so librdmacm never deallocates its per-device
  // PD (which it does when the last id on a device goes) under a BorrowedPd.
  void* cmDevices = nullptr;
  Napi::FunctionReference verbsError;
  Poller poller;
  std::vector<MemoryRegion*> liveMrs;
  // Every live wrapped object, by the pointer napi_unwrap returns for it, with its class's
  // type tag (see Self).
  std::unordered_map<const void*, const napi_type_tag*> wraps;
  bool IsWrap(const void* p, const napi_type_tag* tag) const {
    auto it = wraps.find(p);
    return it != wraps.end() && it->second == tag;
  }

  // Slots: every live wrapped object also has a number that the bound hot verbs (see
  // BoundVerb) carry to find it: an index into this table, where a method call on the object
  // costs a napi_unwrap of `this` (an exception scope and a private-symbol lookup:
  // microseconds in the lab VM). A slot is index + generation × 2^24: a number that once
  // named a freed object never names another.
  struct Slot {
    const void* key = nullptr;  // as in `wraps`; null while free
    const napi_type_tag* tag = nullptr;
    uint32_t gen = 0;
  };
  static constexpr unsigned kSlotIndexBits = 24;
  static constexpr uint64_t kSlotIndexes = uint64_t{1} << kSlotIndexBits;
  std::vector<Slot> slots;
  std::vector<uint32_t> freeSlots;
  static constexpr uint64_t kNoSlot = ~uint64_t{0};
  uint64_t AddSlot(const void* key, const napi_type_tag* tag);  // kNoSlot when the table is full
  void RemoveSlot(uint64_t slot);
  // The key of the live object of class `tag` that `slot` names, or null.
  const void* SlotKey(uint64_t slot, const napi_type_tag* tag) const {
    size_t index = static_cast<size_t>(slot & (kSlotIndexes - 1));
    if (index >= slots.size()) return nullptr;
    const Slot& s = slots[index];
    return s.key != nullptr && s.tag == tag && s.gen == static_cast<uint32_t>(slot >> kSlotIndexBits) ? s.key : nullptr;
  }

  // Property names read on the posting fast path.
  enum Key {
    kWrId,
    kOpcode,
    kSendFlags,
    kSgList,
    kImmData,
    kRdma,
    kAtomic,
    kUd,
    kAddr,
    kLength,
    kLkey,
    kRemoteAddr,
    kRkey,
    kCompareAdd,
    kSwap,
    kAh,
    kRemoteQpn,
    kRemoteQkey,
    kKeyCount
  };
  static constexpr const char* kKeyNames[kKeyCount] = {
      "wr_id",  "opcode", "send_flags",  "sg_list", "imm_data",    "rdma", "atomic", "ud",         "addr",
      "length", "lkey",   "remote_addr", "rkey",    "compare_add", "swap", "ah",     "remote_qpn", "remote_qkey"};
  Napi::Value Get(Napi::Object o, Key k) { return o.Get(kKeyNames[k]); }

 private:
  Napi::Value SetErrorClass(const Napi::CallbackInfo& info);
  Napi::Value GetDeviceList(const Napi::CallbackInfo& info);
  Napi::Value OpenDevice(const Napi::CallbackInfo& info);
};

inline VerbsAddon* AddonOf(Napi::Env env) { return env.GetInstanceData<VerbsAddon>(); }

// Throws the VerbsError the TypeScript layer registered (plain Error with the same fields
// before that): `verb`, errno by number (the class names it), and the details.
[[noreturn]] void ThrowVerbs(Napi::Env env, const char* verb, int err, const std::string& reason = "",
                             const std::string& attribute = "", int badWrIndex = -1);
// A VerbsError whose why is data (verbs/verb-failure.ts VerbFailure, built here as an object):
// native/index.ts words its reason, as the simulator's `because` does.
[[noreturn]] void ThrowVerbsWhy(Napi::Env env, const char* verb, int err, Napi::Object why,
                                const std::string& attribute, int badWrIndex = -1);
// A TypeError worded in English only: for misuse no contract call can make (a wrapped
// object's constructor called from JS, `this` of another class, an object freed under a
// bound verb), never for a learner's argument.
[[noreturn]] void ThrowType(Napi::Env env, const std::string& message);
// A learner's argument error as data: a TypeError with `verb`, `kind` "arg-type", `field`,
// `expected` (verbs/verb-failure.ts ArgExpected: "integer", "object", "string", ...) and `got`
// (the value itself), which native/index.ts turns into the contract's argError with the
// same `why` as the simulator's. Its message is a plain English fallback.
[[noreturn]] void ThrowArgType(Napi::Env env, const char* verb, std::string_view field, const char* expected,
                               napi_value got);
// `field` is not a `what` this addon made ("CQ", "completion channel", "object"): a TypeError
// with `verb`, `kind` "foreign-object", `field` and `what` (verbs/verb-failure.ts ForeignObject).
[[noreturn]] void ThrowForeign(Napi::Env env, const char* verb, std::string_view field, const char* what);

// libibverbs returns errors three ways (-1 with errno, a positive errno, a negative errno).
int ErrnoOf(int ret);

// Argument readers. A wrong JavaScript type (not a number, NaN, fractional) is a TypeError
// as data (ThrowArgType: an integer field expects "integer", as the simulator's `int`);
// an integer that does not fit the C field is EINVAL naming the field, since passing it on
// would silently truncate. `undefined` reads as 0 where `optional`, like a zeroed C struct.
// Names are views: a std::string is built only for an error.
struct Arg {
  Napi::Env env;
  const char* verb;
  // Put before a field's name in its TypeError's `field` (not in an EINVAL's attribute).
  const char* typePrefix = "";
  uint64_t Uint(Napi::Value v, std::string_view name, uint64_t max, bool optional = false) const;
  int64_t Int(Napi::Value v, std::string_view name, int64_t min, int64_t max, bool optional = false) const;
  uint32_t U32(Napi::Value v, std::string_view name, bool optional = false) const {
    return static_cast<uint32_t>(Uint(v, name, UINT32_MAX, optional));
  }
  uint16_t U16(Napi::Value v, std::string_view name, bool optional = false) const {
    return static_cast<uint16_t>(Uint(v, name, UINT16_MAX, optional));
  }
  uint8_t U8(Napi::Value v, std::string_view name, bool optional = false) const {
    return static_cast<uint8_t>(Uint(v, name, UINT8_MAX, optional));
  }
  int32_t I32(Napi::Value v, std::string_view name, bool optional = false) const {
    return static_cast<int32_t>(Int(v, name, INT32_MIN, INT32_MAX, optional));
  }
  // A JavaScript number that must be a safe integer (wr_id, addresses): 0 .. 2^53-1.
  uint64_t Safe(Napi::Value v, std::string_view name, bool optional = false) const {
    return Uint(v, name, (1ULL << 53) - 1, optional);
  }
  // A 64-bit value given as bigint (or a safe-integer number).
  uint64_t Big(Napi::Value v, std::string_view name, bool optional = false) const;
  Napi::Object Obj(Napi::Value v, std::string_view name) const;
  bool Gid(Napi::Value v, std::string_view name, union ibv_gid* out, bool optional = false) const;
};

std::string GidText(const union ibv_gid& gid);
std::string GuidText(__be64 guid);

// A wrapped verbs object. It knows what depends on it (its children, the QPs on a CQ, the
// CQs on a channel) so that a finalizer or ctx.close() can take the graph down child-first,
// and it holds references to what it depends on, which keeps those JS objects (and so
// their C objects) alive while it lives. A parent is therefore never freed under a child.
class Resource {
 public:
  virtual ~Resource();
  Resource(const Resource&) = delete;
  Resource& operator=(const Resource&) = delete;

  bool destroyed() const { return destroyed_; }
  // Explicit destroy: 0, or the errno libibverbs returned (nothing changes then).
  int Destroy();
  // Child-first teardown for finalizers and ctx.close(); cannot fail. If libibverbs still
  // refuses, the C object leaks rather than being freed under something that uses it.
  void ForceDestroy();
  // Records the wrapped object in the addon's `wraps` and gives it a slot, both until it is
  // deleted (see TagWrap).
  void RegisterWrap(VerbsAddon* addon, const void* key, const napi_type_tag* tag);
  uint64_t slot() const { return slot_; }

 protected:
  Resource() = default;
  // Releases the C object: 0 or an errno. `force`: the JS side is gone or the device closes.
  virtual int Release(bool force) = 0;
  void DependOn(Resource* on, Napi::Object onJs);
  const std::vector<Resource*>& dependents() const { return dependents_; }

 private:
  void Detach();
  bool destroyed_ = false;
  VerbsAddon* wrapAddon_ = nullptr;
  const void* wrapKey_ = nullptr;
  uint64_t slot_ = VerbsAddon::kNoSlot;
  std::vector<Resource*> dependents_;
  struct Dependency {
    Resource* on;
    Napi::ObjectReference ref;
  };
  std::vector<Dependency> dependencies_;
};

// Per-class type tags: an argument that must be a CQ, a channel or an AH is checked by tag,
// never reinterpreted (`this` is checked by Self, below).
extern const napi_type_tag kContextTag, kPdTag, kMrTag, kCqTag, kChannelTag, kQpTag, kAhTag;
extern const napi_type_tag kEventChannelTag, kCmIdTag, kCmEventTag;

// Called by each wrapped class's constructor: tags the JS object with the class's type tag
// (what argument checks test) and records the pointer napi_unwrap will return for it.
template <typename T>
void TagWrap(T* self, const Napi::CallbackInfo& info) {
  info.This().As<Napi::Object>().TypeTag(&T::kTag);
  self->RegisterWrap(AddonOf(info.Env()), static_cast<Napi::ObjectWrap<T>*>(self), &T::kTag);
}

// Unwraps `this` after checking that it is a live T and not destroyed; `verb` names the C
// function in the error. The check is one napi_unwrap and a lookup in the addon's `wraps`
// (a pointer is used only if this addon wrapped it as a T), not a type-tag check plus
// napi_unwrap: every Node-API call costs microseconds in the lab VM, and this runs on
// every verb (poll, postSend, postRecv).
template <typename T>
T* Self(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  void* p = nullptr;
  if (napi_unwrap(env, info.This(), &p) != napi_ok || !AddonOf(env)->IsWrap(p, &T::kTag)) {
    ThrowType(env, std::string(verb) + ": illegal invocation: this is not a " + T::kName);
  }
  T* obj = static_cast<T*>(static_cast<Napi::ObjectWrap<T>*>(p));
  if (obj->destroyed()) ThrowVerbs(env, verb, EINVAL, std::string(T::kName) + " was already destroyed");
  return obj;
}

// A hot verb bound to one object: a bare Node-API function whose data names the object by
// slot, so a call is one napi_get_cb_info (for the data and one argument) before the verb:
// no `this` to unwrap, no slot argument to read, no Napi::CallbackInfo layers. In the lab VM
// every Node-API call and call layer costs on every poll and post. Made by BindVerb below.
struct BoundVerb {
  VerbsAddon* addon;
  uint64_t slot;
  const char* verb;
};

// Calls M on the object the function is bound to: a TypeError once that object was freed
// (garbage-collected), EINVAL once destroyed, as a method on the object. C++ exceptions
// become JS exceptions, as node-addon-api's own wrapper makes them. A verb that returns an
// empty Napi::Value returns undefined without another Node-API call.
template <typename T, Napi::Value (T::*M)(Napi::Env, const char* verb, napi_value arg)>
napi_value CallBoundVerb(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg = nullptr;
  void* data = nullptr;
  if (napi_get_cb_info(env, info, &argc, &arg, nullptr, &data) != napi_ok) return nullptr;
  const auto* b = static_cast<const BoundVerb*>(data);
  try {
    const void* key = b->addon->SlotKey(b->slot, &T::kTag);
    if (key == nullptr) ThrowType(env, std::string(b->verb) + ": the " + T::kName + " was freed");
    T* obj = static_cast<T*>(static_cast<Napi::ObjectWrap<T>*>(const_cast<void*>(key)));
    if (obj->destroyed()) ThrowVerbs(env, b->verb, EINVAL, std::string(T::kName) + " was already destroyed");
    return (obj->*M)(Napi::Env(env), b->verb, arg);
  } catch (const Napi::Error& e) {
    e.ThrowAsJavaScriptException();
    return nullptr;
  }
}

// A new function that runs M on `self` (see CallBoundVerb); its BoundVerb is freed with it.
template <typename T, Napi::Value (T::*M)(Napi::Env, const char* verb, napi_value arg)>
Napi::Function BindVerb(Napi::Env env, T* self, const char* name, const char* verb) {
  auto* b = new BoundVerb{AddonOf(env), self->slot(), verb};
  napi_value fn = nullptr;
  napi_status st = napi_create_function(env, name, NAPI_AUTO_LENGTH, CallBoundVerb<T, M>, b, &fn);
  if (st == napi_ok) {
    st = napi_add_finalizer(
        env, fn, b, [](napi_env, void* data, void*) { delete static_cast<BoundVerb*>(data); }, nullptr, nullptr);
  }
  if (st != napi_ok) {
    if (fn == nullptr) delete b;  // else the finalizer owns it, or it leaks 24 bytes rather than dangle
    NAPI_THROW_IF_FAILED(env, st, Napi::Function());
  }
  return Napi::Function(env, fn);
}

// A method trampoline: `M` runs only on a live object of class T. The verb rides in the
// function's data pointer.
template <typename T, Napi::Value (T::*M)(const Napi::CallbackInfo&, const char* verb)>
Napi::Value Method(const Napi::CallbackInfo& info) {
  const char* verb = static_cast<const char*>(info.Data());
  return (Self<T>(info, verb)->*M)(info, verb);
}

struct MethodSpec {
  const char* name;
  const char* verb;
  Napi::Function::Callback fn;
};

// Defines a wrapped class whose methods are plain prototype functions that check `this`
// (see Self) before touching any C++ object. Its constructor only accepts calls from C++.
template <typename T>
Napi::Function DefineVerbsClass(Napi::Env env, const char* name, std::initializer_list<MethodSpec> methods) {
  Napi::Function ctor = Napi::ObjectWrap<T>::DefineClass(env, name, {});
  Napi::Object proto = ctor.Get("prototype").As<Napi::Object>();
  for (const MethodSpec& m : methods) {
    proto.Set(m.name, Napi::Function::New(env, m.fn, m.name, const_cast<char*>(m.verb)));
  }
  return ctor;
}

// The token C++ passes to a wrapped class's constructor; `new` from JS lacks it and fails.
bool ConstructedByAddon(const Napi::CallbackInfo& info);
Napi::Object NewInstance(Napi::FunctionReference& ctor);

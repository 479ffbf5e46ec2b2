// MemoryRegion (struct ibv_mr) over a V8-owned ArrayBuffer.
#include <algorithm>

#include "objects.h"

Napi::Function MemoryRegion::Define(Napi::Env env) {
  return DefineVerbsClass<MemoryRegion>(env, "MemoryRegion",
                                        {
                                            {"dereg", "ibv_dereg_mr", Method<MemoryRegion, &MemoryRegion::Dereg>},
                                        });
}

MemoryRegion::MemoryRegion(const Napi::CallbackInfo& info) : Napi::ObjectWrap<MemoryRegion>(info) {
  if (!ConstructedByAddon(info)) ThrowType(info.Env(), "MemoryRegion objects come from regMr()");
  TagWrap(this, info);
}

void MemoryRegion::Attach(ProtectionDomain* pd, Napi::Object pdJs, ibv_mr* mr, Napi::ArrayBuffer buffer) {
  mr_ = mr;
  buffer_ = Napi::Persistent(buffer);
  addon_ = AddonOf(buffer.Env());
  addon_->liveMrs.push_back(this);
  DependOn(pd, pdJs);
}

bool MemoryRegion::Covers(uint64_t addr, uint64_t len) const {
  if (mr_ == nullptr) return false;
  uint64_t start = reinterpret_cast<uintptr_t>(mr_->addr);
  return addr >= start && len <= mr_->length && addr - start <= mr_->length - len;
}

int MemoryRegion::Release(bool force) {
  int err = ErrnoOf(ibv_dereg_mr(mr_));
  if (err != 0 && !force) return err;
  // Only once the NIC can no longer write into it may V8 collect the memory. (If a forced
  // dereg failed, the reference is kept: a leak, never a write into freed memory.)
  if (err == 0) {
    mr_ = nullptr;
    buffer_.Reset();
  }
  auto& live = addon_->liveMrs;
  live.erase(std::remove(live.begin(), live.end(), this), live.end());
  return err;
}

Napi::Value MemoryRegion::Dereg(const Napi::CallbackInfo& info, const char* verb) {
  return DestroyResult(info.Env(), verb, Destroy(), "");
}

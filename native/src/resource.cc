#include <algorithm>
#include <cmath>

#include "common.h"

Resource::~Resource() {
  if (wrapAddon_ != nullptr) {
    wrapAddon_->wraps.erase(wrapKey_);
    wrapAddon_->RemoveSlot(slot_);
  }
}

void Resource::RegisterWrap(VerbsAddon* addon, const void* key, const napi_type_tag* tag) {
  wrapAddon_ = addon;
  wrapKey_ = key;
  addon->wraps[key] = tag;
  slot_ = addon->AddSlot(key, tag);
}

uint64_t VerbsAddon::AddSlot(const void* key, const napi_type_tag* tag) {
  uint32_t index;
  if (!freeSlots.empty()) {
    index = freeSlots.back();
    freeSlots.pop_back();
  } else {
    if (slots.size() >= kSlotIndexes) return kNoSlot;  // 2^24 live objects
    index = static_cast<uint32_t>(slots.size());
    slots.emplace_back();
  }
  Slot& s = slots[index];
  s.key = key;
  s.tag = tag;
  return (uint64_t{s.gen} << kSlotIndexBits) | index;
}

void VerbsAddon::RemoveSlot(uint64_t slot) {
  if (slot == kNoSlot) return;
  size_t index = static_cast<size_t>(slot & (kSlotIndexes - 1));
  if (index >= slots.size() || slots[index].key == nullptr) return;
  Slot& s = slots[index];
  s.key = nullptr;
  s.tag = nullptr;
  s.gen++;  // wraps after 2^32 reuses of one index: far beyond any program's life
  freeSlots.push_back(static_cast<uint32_t>(index));
}

int Resource::Destroy() {
  if (destroyed_) return 0;
  int err = Release(false);
  if (err == 0) {
    destroyed_ = true;
    Detach();
  }
  return err;
}

void Resource::ForceDestroy() {
  if (destroyed_) return;
  // Each dependent removes itself from dependents_ as it detaches.
  while (!dependents_.empty()) dependents_.back()->ForceDestroy();
  (void)Release(true);
  destroyed_ = true;
  Detach();
}

void Resource::DependOn(Resource* on, Napi::Object onJs) {
  on->dependents_.push_back(this);
  dependencies_.push_back(Dependency{on, Napi::Persistent(onJs)});
}

void Resource::Detach() {
  for (Dependency& d : dependencies_) {
    auto& list = d.on->dependents_;
    list.erase(std::remove(list.begin(), list.end(), this), list.end());
    d.ref.Reset();
  }
  dependencies_.clear();
}

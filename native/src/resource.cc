#include <algorithm>

#include "common.h"

Resource::~Resource() {
  if (wrapAddon_ != nullptr) wrapAddon_->wraps.erase(wrapKey_);
}

void Resource::RegisterWrap(VerbsAddon* addon, const void* key, const napi_type_tag* tag) {
  wrapAddon_ = addon;
  wrapKey_ = key;
  addon->wraps[key] = tag;
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

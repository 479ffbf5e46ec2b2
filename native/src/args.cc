#include <arpa/inet.h>
#include <endian.h>

#include <cerrno>
#include <cmath>
#include <cstdio>

#include "common.h"

namespace {
[[noreturn]] void ThrowDetails(Napi::Env env, const char* verb, int err, const std::string& reason,
                               Napi::Object details) {
  VerbsAddon* addon = AddonOf(env);
  if (addon != nullptr && !addon->verbsError.IsEmpty()) {
    Napi::Object e = addon->verbsError.New({Napi::String::New(env, verb), Napi::Number::New(env, err), details});
    throw Napi::Error(env, e);
  }
  Napi::Error e = Napi::Error::New(
      env, std::string(verb) + ": errno " + std::to_string(err) + (reason.empty() ? "" : ": " + reason));
  e.Set("verb", verb);
  e.Set("errno", Napi::Number::New(env, err));
  e.Set("details", details);
  throw e;
}
}  // namespace

void ThrowVerbs(Napi::Env env, const char* verb, int err, const std::string& reason, const std::string& attribute,
                int badWrIndex) {
  Napi::Object details = Napi::Object::New(env);
  if (!reason.empty()) details.Set("reason", reason);
  if (!attribute.empty()) details.Set("attribute", attribute);
  if (badWrIndex >= 0) details.Set("badWrIndex", badWrIndex);
  ThrowDetails(env, verb, err, reason, details);
}

void ThrowVerbsWhy(Napi::Env env, const char* verb, int err, Napi::Object why, const std::string& attribute,
                   int badWrIndex) {
  Napi::Object details = Napi::Object::New(env);
  details.Set("why", why);
  if (!attribute.empty()) details.Set("attribute", attribute);
  if (badWrIndex >= 0) details.Set("badWrIndex", badWrIndex);
  ThrowDetails(env, verb, err, "", details);
}

void ThrowType(Napi::Env env, const std::string& message) { throw Napi::TypeError::New(env, message); }

void ThrowArgType(Napi::Env env, const char* verb, std::string_view field, const char* expected, napi_value got) {
  Napi::TypeError e = Napi::TypeError::New(env, std::string(verb) + ": " + std::string(field) + " must be " + expected);
  e.Set("verb", verb);
  e.Set("kind", "arg-type");
  e.Set("field", std::string(field));
  e.Set("expected", expected);
  e.Set("got", got == nullptr ? env.Undefined() : Napi::Value(env, got));
  throw e;
}

void ThrowForeign(Napi::Env env, const char* verb, std::string_view field, const char* what) {
  Napi::TypeError e = Napi::TypeError::New(
      env, std::string(verb) + ": " + std::string(field) + " is not a " + what + " of this backend");
  e.Set("verb", verb);
  e.Set("kind", "foreign-object");
  e.Set("field", std::string(field));
  e.Set("what", what);
  throw e;
}

int ErrnoOf(int ret) {
  if (ret == -1) return errno != 0 ? errno : EINVAL;
  return ret < 0 ? -ret : ret;
}

namespace {
// A name becomes a std::string only on the way to an error.
std::string S(std::string_view v) { return std::string(v); }

std::string Show(double d) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.17g", d);
  return buf;
}
}  // namespace

uint64_t Arg::Uint(Napi::Value v, std::string_view name, uint64_t max, bool optional) const {
  if (optional && v.IsUndefined()) return 0;
  if (v.IsBigInt()) {
    bool lossless = false;
    uint64_t u = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless || u > max) ThrowVerbs(env, verb, EINVAL, S(name) + " is out of range", S(name));
    return u;
  }
  if (!v.IsNumber()) ThrowArgType(env, verb, typePrefix + S(name), "integer", v);
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::trunc(d) != d) ThrowArgType(env, verb, typePrefix + S(name), "integer", v);
  if (d < 0 || d > static_cast<double>(max)) {
    ThrowVerbs(env, verb, EINVAL, S(name) + " = " + Show(d) + " is out of range (0.." + std::to_string(max) + ")",
               S(name));
  }
  return static_cast<uint64_t>(d);
}

int64_t Arg::Int(Napi::Value v, std::string_view name, int64_t min, int64_t max, bool optional) const {
  if (optional && v.IsUndefined()) return 0;
  if (!v.IsNumber()) ThrowArgType(env, verb, typePrefix + S(name), "integer", v);
  double d = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(d) || std::trunc(d) != d) ThrowArgType(env, verb, typePrefix + S(name), "integer", v);
  if (d < static_cast<double>(min) || d > static_cast<double>(max)) {
    ThrowVerbs(
        env, verb, EINVAL,
        S(name) + " = " + Show(d) + " is out of range (" + std::to_string(min) + ".." + std::to_string(max) + ")",
        S(name));
  }
  return static_cast<int64_t>(d);
}

uint64_t Arg::Big(Napi::Value v, std::string_view name, bool optional) const {
  if (optional && v.IsUndefined()) return 0;
  if (v.IsBigInt()) {
    bool lossless = false;
    uint64_t u = v.As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) {
      // Negative bigints wrap like C's conversion to uint64_t; wider ones are refused.
      int64_t s = v.As<Napi::BigInt>().Int64Value(&lossless);
      if (!lossless) ThrowVerbs(env, verb, EINVAL, S(name) + " does not fit in 64 bits", S(name));
      u = static_cast<uint64_t>(s);
    }
    return u;
  }
  return Safe(v, name, optional);
}

Napi::Object Arg::Obj(Napi::Value v, std::string_view name) const {
  if (!v.IsObject()) ThrowArgType(env, verb, typePrefix + S(name), "object", v);
  return v.As<Napi::Object>();
}

bool Arg::Gid(Napi::Value v, std::string_view name, union ibv_gid* out, bool optional) const {
  memset(out, 0, sizeof *out);
  if (optional && v.IsUndefined()) return false;
  if (!v.IsString()) ThrowArgType(env, verb, typePrefix + S(name), "ipv6-text", v);
  std::string s = v.As<Napi::String>().Utf8Value();
  if (inet_pton(AF_INET6, s.c_str(), out->raw) != 1) {
    Napi::Object why = Napi::Object::New(env);
    why.Set("kind", "not-a-gid");
    why.Set("text", s);
    ThrowVerbsWhy(env, verb, EINVAL, why, S(name));
  }
  return true;
}

std::string GidText(const union ibv_gid& gid) {
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, gid.raw, buf, sizeof buf) == nullptr) return "::";
  return buf;
}

std::string GuidText(__be64 guid) {
  uint64_t g = be64toh(guid);
  char buf[32];
  snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48) & 0xffff,
           static_cast<unsigned>(g >> 32) & 0xffff, static_cast<unsigned>(g >> 16) & 0xffff,
           static_cast<unsigned>(g) & 0xffff);
  return buf;
}

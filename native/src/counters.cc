// Context::QueryCounters: a port's hardware counters, read over RDMA netlink
// (RDMA_NLDEV_CMD_STAT_GET, what `rdma statistic show link` asks).
//
// Why not sysfs: ib_core serves /sys/class/infiniband/<dev>/ports/<n>/hw_counters/* from a
// copy it refreshes at most once per `lifespan` (10 ms by default, counted in jiffies), so a
// read soon after another returns the old values even though the traffic, and the completion
// the program already polled, happened. The netlink request makes the kernel ask the driver
// every time (rxe: atomic64 reads of its counters), so a read always sees every packet the
// driver has counted.
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "objects.h"

namespace {
constexpr const char* kNetlinkVerb = "RDMA_NLDEV_CMD_STAT_GET";

// Closes the socket however the read ends (a throw included).
struct Socket {
  int fd;
  ~Socket() {
    if (fd >= 0) close(fd);
  }
};

void PutU32(std::vector<char>& msg, uint16_t type, uint32_t value) {
  nlattr a{};
  a.nla_len = NLA_HDRLEN + sizeof value;
  a.nla_type = type;
  size_t at = msg.size();
  msg.resize(at + NLA_ALIGN(a.nla_len));
  memcpy(msg.data() + at, &a, sizeof a);
  memcpy(msg.data() + at + NLA_HDRLEN, &value, sizeof value);
}

// Calls f(type, payload, length) for each attribute in [data, data + len).
template <typename F>
void EachAttr(const char* data, size_t len, F f) {
  while (len >= NLA_HDRLEN) {
    nlattr a;
    memcpy(&a, data, sizeof a);
    if (a.nla_len < NLA_HDRLEN || a.nla_len > len) return;
    f(a.nla_type & NLA_TYPE_MASK, data + NLA_HDRLEN, static_cast<size_t>(a.nla_len - NLA_HDRLEN));
    size_t step = NLA_ALIGN(a.nla_len);
    if (step >= len) return;
    data += step;
    len -= step;
  }
}

// One RDMA_NLDEV_ATTR_STAT_HWCOUNTERS table into o: name → value.
void ReadTable(Napi::Env env, Napi::Object o, const char* data, size_t len) {
  EachAttr(data, len, [&](uint16_t type, const char* entry, size_t entryLen) {
    if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) return;
    std::string name;
    uint64_t value = 0;
    bool hasValue = false;
    EachAttr(entry, entryLen, [&](uint16_t t, const char* p, size_t n) {
      if (t == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME) name.assign(p, strnlen(p, n));
      if (t == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE && n == sizeof value) {
        memcpy(&value, p, sizeof value);
        hasValue = true;
      }
    });
    // Counters are counts of packets and events: far below 2^53, so a Number holds them exactly.
    if (!name.empty() && hasValue) o.Set(name, Napi::Number::New(env, static_cast<double>(value)));
  });
}
}  // namespace

Napi::Value Context::QueryCounters(const Napi::CallbackInfo& info, const char* verb) {
  Napi::Env env = info.Env();
  Arg arg{env, verb};
  uint8_t port = info[0].IsUndefined() ? 1 : arg.U8(info[0], "port_num");
  int index = ibv_get_device_index(ctx_->device);
  if (index < 0) {
    ThrowVerbs(env, verb, EOPNOTSUPP, "this kernel does not report the device's index, so its counters cannot be read");
  }

  Socket sock{socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA)};
  if (sock.fd < 0) ThrowVerbs(env, verb, errno, "cannot open an RDMA netlink socket");

  std::vector<char> msg(NLMSG_HDRLEN);
  PutU32(msg, RDMA_NLDEV_ATTR_DEV_INDEX, static_cast<uint32_t>(index));
  PutU32(msg, RDMA_NLDEV_ATTR_PORT_INDEX, port);
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(msg.size());
  h.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_STAT_GET);
  h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
  h.nlmsg_seq = 1;
  memcpy(msg.data(), &h, sizeof h);
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(sock.fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0) {
    ThrowVerbs(env, verb, errno, std::string(kNetlinkVerb) + " could not be sent");
  }

  Napi::Object out = Napi::Object::New(env);
  bool gotTable = false;
  std::vector<char> buf(64 * 1024);  // mlx5's ~100 counters take ~6 KB
  for (;;) {
    ssize_t n = recv(sock.fd, buf.data(), buf.size(), 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      ThrowVerbs(env, verb, errno, std::string("no answer to ") + kNetlinkVerb);
    }
    size_t left = static_cast<size_t>(n);
    for (const char* p = buf.data(); left >= NLMSG_HDRLEN;) {
      nlmsghdr r;
      memcpy(&r, p, sizeof r);
      if (r.nlmsg_len < NLMSG_HDRLEN || r.nlmsg_len > left) break;
      if (r.nlmsg_type == NLMSG_ERROR) {
        nlmsgerr e;
        memcpy(&e, p + NLMSG_HDRLEN, sizeof e);
        if (e.error != 0) {
          ThrowVerbs(env, verb, -e.error, "the kernel refused to report port " + std::to_string(port) + "'s counters",
                     "port_num");
        }
        if (!gotTable) ThrowVerbs(env, verb, ENOENT, "the driver reports no hardware counters", "port_num");
        return out;  // the ACK: the answer is complete
      }
      if (r.nlmsg_type == NLMSG_DONE) return out;
      EachAttr(p + NLMSG_HDRLEN, r.nlmsg_len - NLMSG_HDRLEN, [&](uint16_t type, const char* data, size_t len) {
        if (type != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS) return;
        gotTable = true;
        ReadTable(env, out, data, len);
      });
      size_t step = NLMSG_ALIGN(r.nlmsg_len);
      if (step >= left) break;
      p += step;
      left -= step;
    }
  }
}

// Running the local nvidia-smi: a fixed argument vector, no shell, a time limit.
#include "nvidia_smi.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "gpuadvisor/rules/inspect.h"
#include "gpuadvisor/util/text.h"

extern char** environ;

namespace gpuadvisor::cli {
namespace {

// How long nvidia-smi may take before inspect gives up (a hung GPU can hang it).
constexpr int kSmiTimeoutMs = 60'000;

struct Captured {
  int status = 0;  ///< exit status, or 128 + signal
  std::string out, err;
};

// Runs argv[0] (searched on PATH) with a fixed argument vector and no shell; captures both
// outputs. Fails with a message when the program is not found or does not finish in time.
Result<Captured> run_capture(const std::vector<std::string>& args) {
  using R = Result<Captured>;
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return R::fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return R::fail(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    if (rc == ENOENT) return R::fail("not found");
    return R::fail(fmt::format("cannot run {}: {}", args[0], std::strerror(rc)));
  }
  Captured c;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* bufs[2] = {&c.out, &c.err};
  int open_fds = 2;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSmiTimeoutMs);
  bool timed_out = false;
  while (open_fds > 0) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    int n = poll(fds, 2, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      timed_out = n == 0;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0 && bufs[i]->size() < util::kMaxInputBytes) {
        bufs[i]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& p : fds)
    if (p.fd >= 0) close(p.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return R::fail(fmt::format("{} did not finish within {} s", args[0], kSmiTimeoutMs / 1000));
  c.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return c;
}

std::string first_line(const std::string& s) {
  std::string t = util::trim(s);
  auto nl = t.find('\n');
  return util::trim(nl == std::string::npos ? t : t.substr(0, nl));
}

}  // namespace

std::string query_nvidia_smi(const std::string& exe, std::string_view instead) {
  for (int level = 0; level < rules::kSmiQueryLevels; ++level) {
    auto fields = rules::smi_query_fields(level);
    std::vector<std::string> names(fields.begin(), fields.end());
    // A name without '/' is looked up on PATH (posix_spawnp); a path is run as given.
    std::vector<std::string> args = {exe, "--query-gpu=" + util::join(names, ","), "--format=csv"};
    auto r = run_capture(args);
    if (!r) {
      if (r.error() == "not found") {
        if (exe.find('/') != std::string::npos)
          throw Error(
              fmt::format("--nvidia-smi: {} not found or not executable; use {}", util::quote(exe, 200), instead));
        throw Error(fmt::format("nvidia-smi not found on PATH; use --nvidia-smi PATH or {}", instead));
      }
      throw Error("nvidia-smi: " + r.error());
    }
    if (r->status == 0) return r->out;
    std::string both = r->out + "\n" + r->err;
    if (both.find("is not a valid field") != std::string::npos && level + 1 < rules::kSmiQueryLevels) continue;
    std::string msg = first_line(r->err.empty() ? r->out : r->err);
    throw Error(
        fmt::format("nvidia-smi exited with status {}{}", r->status, msg.empty() ? "" : ": " + util::quote(msg, 120)));
  }
  throw Error("nvidia-smi rejected every field list", Exit::internal);
}

DetectedGpus detect_gpus(const std::string& exe, const catalog::Catalog& catalog) {
  const std::string text = query_nvidia_smi(exe, "--gpu NAME");
  auto cap = rules::parse_smi_csv(text, "nvidia-smi");
  if (!cap) throw Error(cap.error());
  auto rep = rules::inspect(*cap, catalog, catalog::CompatTable::embedded());
  if (!rep) throw Error(rep.error());
  DetectedGpus d;
  std::vector<std::pair<const catalog::Gpu*, int>> kinds;  // in the order nvidia-smi lists them
  for (const auto& c : rep->cards) {
    if (!c.gpu) {
      d.unidentified.push_back(c.name);
      continue;
    }
    auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& k) { return k.first == c.gpu; });
    if (it == kinds.end())
      kinds.emplace_back(c.gpu, 1);
    else
      ++it->second;
  }
  if (kinds.empty())
    throw Error(fmt::format("nvidia-smi lists {} GPU{} ({}), none of them in the catalog; name one with --gpu",
                            rep->cards.size(), rep->cards.size() == 1 ? "" : "s",
                            util::join_list(d.unidentified, "and")));
  if (kinds.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [g, n] : kinds) names.push_back(fmt::format("{} x {}", n, g->id));
    throw Error(fmt::format("nvidia-smi lists more than one kind of GPU ({}); name one with --gpu",
                            util::join_list(names, "and")));
  }
  d.gpu = kinds.front().first;
  d.count = kinds.front().second;
  return d;
}

}  // namespace gpuadvisor::cli

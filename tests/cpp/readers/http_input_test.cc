// http(s) shard input (readers/internal/shard_input.h) against a one-thread HTTP/1.1 server on
// 127.0.0.1 started by the test: Range requests and their log, 404, retries after 5xx and resets,
// a file replaced while read (If-Match -> 412), and the byte source over HTTP with a resume.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "readers/internal/byte_source.h"
#include "readers/internal/shard_input.h"

namespace luminamoon::data::readers_internal {
namespace {

class TinyServer {
 public:
  TinyServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TinyServer() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }

  std::string url(const std::string& name) const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/" + name;
  }
  void put(const std::string& body, const std::string& etag) {
    std::lock_guard lock(mutex_);
    body_ = body;
    etag_ = etag;
  }
  void fault(const std::string& f) {
    std::lock_guard lock(mutex_);
    faults_.push_back(f);
  }
  std::vector<std::string> ranges() {
    std::lock_guard lock(mutex_);
    return ranges_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    ranges_.clear();
  }

 private:
  static std::string header(const std::string& request, const std::string& name) {
    const std::size_t at = request.find("\r\n" + name + ": ");
    if (at == std::string::npos) return {};
    const std::size_t from = at + name.size() + 4;
    return request.substr(from, request.find("\r\n", from) - from);
  }

  void serve() {
    while (!stop_) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::string request;
      char buf[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(c, buf, sizeof buf, 0);
        if (n <= 0) break;
        request.append(buf, static_cast<std::size_t>(n));
      }
      std::string body, etag, fault;
      {
        std::lock_guard lock(mutex_);
        ranges_.push_back(header(request, "Range"));
        if (!faults_.empty()) {
          fault = faults_.front();
          faults_.pop_front();
        }
        body = body_;
        etag = etag_;
      }
      std::string response;
      const bool missing = request.rfind("GET /missing", 0) == 0;
      if (fault == "reset") {
        linger l{1, 0};
        ::setsockopt(c, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        ::close(c);
        continue;
      }
      if (!fault.empty()) {
        response = "HTTP/1.1 " + fault + " Fault\r\nContent-Length: 0\r\n";
      } else if (missing) {
        response = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n";
      } else if (const std::string m = header(request, "If-Match"); !m.empty() && m != etag) {
        response = "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n";
      } else {
        const std::string range = header(request, "Range");  // bytes=a-b
        const std::size_t dash = range.find('-');
        const std::size_t first = std::stoull(range.substr(6, dash - 6));
        std::size_t last = std::stoull(range.substr(dash + 1));
        last = std::min(last, body.size() - 1);
        const std::string part = body.substr(first, last - first + 1);
        response = "HTTP/1.1 206 Partial Content\r\nETag: " + etag + "\r\nContent-Range: bytes " +
                   std::to_string(first) + "-" + std::to_string(last) + "/" +
                   std::to_string(body.size()) +
                   "\r\nContent-Length: " + std::to_string(part.size()) + "\r\n";
        response += "Connection: close\r\n\r\n" + part;
        ::send(c, response.data(), response.size(), MSG_NOSIGNAL);
        ::close(c);
        continue;
      }
      response += "Connection: close\r\n\r\n";
      ::send(c, response.data(), response.size(), MSG_NOSIGNAL);
      ::close(c);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mutex_;
  std::string body_, etag_;
  std::deque<std::string> faults_;
  std::vector<std::string> ranges_;
};

HttpOptions fast(unsigned retries = 2) { return HttpOptions{retries, 0.001, 5.0}; }

std::string numbered_lines(std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST(HttpInput, RangeRequestsSizeAndValidators) {
  TinyServer server;
  const std::string body = numbered_lines(2000);
  server.put(body, "\"e1\"");
  std::string error;
  auto input = open_http_input(server.url("a.jsonl"), fast(), error);
  ASSERT_NE(input, nullptr) << error;
  EXPECT_EQ(input->size(), body.size());
  EXPECT_EQ(input->validators(),
            "LMHTTP 1\nsize " + std::to_string(body.size()) + "\netag \"e1\"\nlast-modified \n");
  std::string got(100, '\0');
  server.clear();
  ASSERT_EQ(input->pread_some(got.data(), 100, 9000), 100u);
  EXPECT_EQ(got, body.substr(9000, 100));
  EXPECT_EQ(server.ranges(),
            std::vector<std::string>{"bytes=9000-" + std::to_string(body.size() - 1)});
  EXPECT_EQ(input->pread_some(got.data(), 100, body.size()), 0u);  // at the end: no request
  EXPECT_EQ(server.ranges().size(), 1u);
}

TEST(HttpInput, ErrorsRetriesAndChangedFiles) {
  TinyServer server;
  server.put(numbered_lines(100), "\"e1\"");
  std::string error;
  EXPECT_EQ(open_http_input(server.url("missing.jsonl"), fast(), error), nullptr);
  EXPECT_EQ(error, "HTTP 404");
  server.fault("500");
  server.fault("reset");
  EXPECT_NE(open_http_input(server.url("a.jsonl"), fast(2), error), nullptr) << error;
  server.fault("503");
  server.fault("503");
  EXPECT_EQ(open_http_input(server.url("a.jsonl"), fast(1), error), nullptr);
  EXPECT_EQ(error, "HTTP 503 after 2 attempts");
  server.fault("reset");
  EXPECT_EQ(open_http_input(server.url("a.jsonl"), fast(0), error), nullptr);
  EXPECT_EQ(error, "connection error after 1 attempt");
  auto input = open_http_input(server.url("a.jsonl"), fast(), error);
  ASSERT_NE(input, nullptr);
  server.put(numbered_lines(100), "\"e2\"");
  char c;
  try {
    input->pread_some(&c, 1, 5);
    FAIL() << "a replaced file must not be read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the remote shard changed while it was read (ETag \"e1\""),
              std::string::npos)
        << e.what();
  }
}

TEST(HttpInput, ByteSourceResumesAtAnOffsetWithoutThePrefix) {
  TinyServer server;
  const std::string body = numbered_lines(5000);
  server.put(body, "\"e1\"");
  std::string error;
  SourceOptions options;
  options.http = fast();
  auto source = open_byte_source(server.url("p.jsonl"), Compression::kNone, error, &options);
  ASSERT_NE(source, nullptr) << error;
  server.clear();
  std::optional<std::uint64_t> newlines;
  const std::uint64_t at = body.size() * 9 / 10;
  EXPECT_EQ(source->skip(at, newlines), at);
  std::string rest(body.size(), '\0');
  std::size_t got = 0;
  while (const std::size_t n = source->read(rest.data() + got, rest.size() - got)) got += n;
  EXPECT_EQ(rest.substr(0, got), body.substr(at));
  EXPECT_EQ(server.ranges(), std::vector<std::string>{"bytes=" + std::to_string(at) + "-" +
                                                      std::to_string(body.size() - 1)});
  EXPECT_TRUE(is_url("HTTPS://x/y.jsonl"));
  EXPECT_FALSE(is_url("./http://x"));
  EXPECT_EQ(name_for_format("http://h/a.jsonl.gz?sig=1#f"), "http://h/a.jsonl.gz");
  EXPECT_EQ(name_for_format("a.jsonl?x"), "a.jsonl?x");
}

}  // namespace
}  // namespace luminamoon::data::readers_internal

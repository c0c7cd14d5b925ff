// http(s) shards through libcurl: HTTP/1.1 Range requests, bounded retries with exponential
// backoff on 5xx / timeouts / connection errors, and the ETag / Last-Modified of the first
// response required of every later one (If-Match, else If-Unmodified-Since), so a file replaced
// while it is read is an error, never a silent mix of two versions. Messages are shared with the
// Python fallback (fallbacks/http_input.py).
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "luminamoon/data/common/xxh3.h"
#include "readers/internal/shard_input.h"

namespace luminamoon::data::readers_internal {
namespace {

// Bytes fetched per request: large enough that the request overhead vanishes, small enough that a
// resume fetches little past what it needs.
constexpr std::uint64_t kFetchBytes = 4u << 20;
constexpr double kMaxBackoff = 60.0;

bool ascii_iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Response {
  bool transport_ok = false;
  bool timed_out = false;
  long status = 0;
  std::string body;
  std::string etag, last_modified, content_range;
  std::uint64_t body_limit = 0;  // a server that ignores Range must not fill memory
  long header_status = 0;        // from the status line, before the body arrives
  bool overflow = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* r = static_cast<Response*>(user);
  const std::size_t n = size * count;
  if (r->header_status != 200 && r->header_status != 206) return n;  // an error page: dropped
  if (r->body.size() + n > r->body_limit) {
    r->overflow = true;
    return 0;  // aborts the transfer
  }
  r->body.append(data, n);
  return n;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* r = static_cast<Response*>(user);
  const std::string_view line(data, size * count);
  if (line.rfind("HTTP/", 0) == 0) {  // a new response (after a redirect): start over
    const std::size_t space = line.find(' ');
    r->header_status = 0;
    for (std::size_t i = space + 1;
         space != std::string_view::npos && i < line.size() && line[i] >= '0' && line[i] <= '9';
         ++i) {
      r->header_status = r->header_status * 10 + (line[i] - '0');
    }
    r->etag.clear();
    r->last_modified.clear();
    r->content_range.clear();
    return size * count;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * count;
  const std::string_view name = trim(line.substr(0, colon));
  const std::string_view value = trim(line.substr(colon + 1));
  if (ascii_iequal(name, "etag")) r->etag = value;
  if (ascii_iequal(name, "last-modified")) r->last_modified = value;
  if (ascii_iequal(name, "content-range")) r->content_range = value;
  return size * count;
}

// "bytes 0-0/1234" or "bytes */1234" -> 1234.
std::optional<std::uint64_t> total_of(std::string_view content_range) {
  const std::size_t slash = content_range.rfind('/');
  if (slash == std::string_view::npos || slash + 1 >= content_range.size()) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : content_range.substr(slash + 1)) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

class HttpInput final : public ShardInput {
 public:
  HttpInput(std::string url, HttpOptions options)
      : url_(std::move(url)), options_(options), curl_(curl_easy_init()) {
    if (curl_ == nullptr) throw std::bad_alloc();
  }
  ~HttpInput() override { curl_easy_cleanup(curl_); }

  // The first request: byte 0, for the size and the validators. "" on success.
  std::string open() {
    Response r;
    std::string error;
    if (!fetch(0, 0, r, error, /*check=*/false)) return error;
    if (r.status == 416) {
      const auto total = total_of(r.content_range);
      if (!total || *total != 0) return "HTTP 416 for byte 0 of a non-empty file";
      size_ = 0;
    } else if (r.status == 200) {
      return "the server ignored the Range header (HTTP 200); http(s) shards need a server "
             "that supports Range requests";
    } else {
      const auto total = total_of(r.content_range);
      if (!total) return "HTTP 206 without a valid Content-Range";
      size_ = *total;
      cache_ = std::move(r.body);
      cache_at_ = 0;
    }
    etag_ = r.etag;
    last_modified_ = r.last_modified;
    return {};
  }

  std::size_t pread_some(void* buffer, std::size_t size, std::uint64_t offset) override {
    if (offset >= size_ || size == 0) return 0;
    const std::uint64_t want = std::min<std::uint64_t>(size, size_ - offset);
    if (offset < cache_at_ || offset + want > cache_at_ + cache_.size()) {
      const std::uint64_t last = std::min(size_, offset + std::max(want, kFetchBytes)) - 1;
      Response r;
      std::string error;
      if (!fetch(offset, last, r, error, /*check=*/true)) throw InputError(error);
      if (r.body.size() != last - offset + 1) {
        throw InputError("HTTP 206 with " + std::to_string(r.body.size()) +
                         " bytes for a range of " + std::to_string(last - offset + 1));
      }
      cache_ = std::move(r.body);
      cache_at_ = offset;
    }
    std::memcpy(buffer, cache_.data() + (offset - cache_at_), static_cast<std::size_t>(want));
    return static_cast<std::size_t>(want);
  }

  std::uint64_t size() const override { return size_; }

  ShardIdentity identity() const override {
    const std::string tag = etag_ + "\n" + last_modified_;
    return {size_, static_cast<std::int64_t>(xxh3_64(tag))};
  }

  std::string validators() const override {
    return "LMHTTP 1\nsize " + std::to_string(size_) + "\netag " + etag_ + "\nlast-modified " +
           last_modified_ + "\n";
  }

 private:
  // One request, retried on 5xx / timeouts / connection errors. False with `error` when it
  // failed for good; a 4xx other than 416 (and 412 when checking) is an error at once.
  bool fetch(std::uint64_t first, std::uint64_t last, Response& r, std::string& error, bool check) {
    double backoff = options_.backoff;
    const unsigned attempts = options_.retries + 1;
    for (unsigned attempt = 1;; ++attempt) {
      r = Response();
      r.body_limit = last - first + 1;
      perform(first, last, check, r);
      std::string failure;
      if (r.overflow) {
        error =
            "the server ignored the Range header; http(s) shards need a server that "
            "supports Range requests";
        return false;
      }
      if (!r.transport_ok) {
        failure = r.timed_out ? "timeout" : "connection error";
      } else if (r.status >= 500) {
        failure = "HTTP " + std::to_string(r.status);
      } else if (r.status == 412 && check) {
        error = changed_message();
        return false;
      } else if (r.status >= 400 && r.status != 416) {
        error = "HTTP " + std::to_string(r.status);
        return false;
      } else {
        if (check && r.status == 206 &&
            ((!etag_.empty() && r.etag != etag_) ||
             (etag_.empty() && !last_modified_.empty() && r.last_modified != last_modified_))) {
          error = changed_message();
          return false;
        }
        if (check && r.status == 200) {
          error =
              "the server ignored the Range header (HTTP 200); http(s) shards need a server "
              "that supports Range requests";
          return false;
        }
        return true;
      }
      if (attempt >= attempts) {
        error = failure + " after " + std::to_string(attempts) +
                (attempts == 1 ? " attempt" : " attempts");
        return false;
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(backoff, kMaxBackoff)));
      backoff *= 2;
    }
  }

  std::string changed_message() const {
    return "the remote shard changed while it was read (ETag " +
           (etag_.empty() ? std::string("none") : etag_) + ", Last-Modified " +
           (last_modified_.empty() ? std::string("none") : last_modified_) +
           " when first read); restart this shard";
  }

  void perform(std::uint64_t first, std::uint64_t last, bool check, Response& r) {
    curl_easy_reset(curl_);
    curl_easy_setopt(curl_, CURLOPT_URL, url_.c_str());
    const std::string range = std::to_string(first) + "-" + std::to_string(last);
    curl_easy_setopt(curl_, CURLOPT_RANGE, range.c_str());
    curl_easy_setopt(curl_, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(curl_, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(curl_, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_ACCEPT_ENCODING, nullptr);  // bytes as stored, no gzip
    const long timeout_ms = static_cast<long>(options_.timeout * 1000.0);
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, std::max(timeout_ms, 1L));
    curl_easy_setopt(curl_, CURLOPT_CONNECTTIMEOUT_MS, std::max(timeout_ms, 1L));
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(curl_, CURLOPT_WRITEDATA, &r);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(curl_, CURLOPT_HEADERDATA, &r);
    curl_slist* headers = nullptr;
    if (check && !etag_.empty()) {
      headers = curl_slist_append(headers, ("If-Match: " + etag_).c_str());
    } else if (check && !last_modified_.empty()) {
      headers = curl_slist_append(headers, ("If-Unmodified-Since: " + last_modified_).c_str());
    }
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers);
    const CURLcode rc = curl_easy_perform(curl_);
    curl_slist_free_all(headers);
    if (rc == CURLE_OK) {
      r.transport_ok = true;
      curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &r.status);
    } else {
      r.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    }
  }

  std::string url_;
  HttpOptions options_;
  CURL* curl_;
  std::uint64_t size_ = 0;
  std::string etag_, last_modified_;
  std::string cache_;
  std::uint64_t cache_at_ = 0;
};

}  // namespace

bool is_url(std::string_view path) noexcept {
  for (const std::string_view scheme : {"http://", "https://"}) {
    if (path.size() >= scheme.size() && ascii_iequal(path.substr(0, scheme.size()), scheme)) {
      return true;
    }
  }
  return false;
}

std::string_view name_for_format(std::string_view path) noexcept {
  if (!is_url(path)) return path;
  const std::size_t cut = path.find_first_of("?#");
  return cut == std::string_view::npos ? path : path.substr(0, cut);
}

std::unique_ptr<ShardInput> open_http_input(const std::string& url, const HttpOptions& options,
                                            std::string& error) {
  global_init();
  auto input = std::make_unique<HttpInput>(url, options);
  error = input->open();
  if (!error.empty()) return nullptr;
  return input;
}

}  // namespace luminamoon::data::readers_internal

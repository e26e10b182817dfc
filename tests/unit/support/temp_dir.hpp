#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace zpolicy::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on scope exit.
class TempDir {
 public:
  TempDir() : TempDir(default_base()) {}
  // Under `base` instead, for trees whose paths must not lie below the temporary directory.
  explicit TempDir(const std::string& base) {
    std::string tmpl = base + "/zpolicy-test-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = std::filesystem::canonical(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string operator/(std::string_view rel) const { return (path_ / rel).string(); }

  // Writes `content` byte for byte to `rel`, creating parent directories.
  std::string write(std::string_view rel, std::string_view content) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    if (!out.flush()) throw std::runtime_error("cannot write " + p.string());
    return p.string();
  }
  std::string mkdir(std::string_view rel) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p);
    return p.string();
  }
  std::string symlink(std::string_view target, std::string_view rel) const {
    auto p = path_ / rel;
    std::filesystem::create_directories(p.parent_path());
    std::filesystem::create_symlink(target, p);
    return p.string();
  }

 private:
  static std::string default_base() {
    const char* base = std::getenv("TMPDIR");
    return base && base[0] == '/' ? base : "/tmp";
  }

  std::filesystem::path path_;
};

}  // namespace zpolicy::test

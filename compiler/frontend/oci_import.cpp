#include "compiler/frontend/oci_import.hpp"

#include <algorithm>
#include <initializer_list>

#include "compiler/frontend/json_reader.hpp"

namespace zpolicy::compiler {
namespace {

using json::Value;

class Importer {
 public:
  Importer(const std::string& file, ir::Diagnostics& d, const OciImportOptions& o)
      : file_(file), diags_(d), opts_(o) {}

  std::optional<ir::SyscallSpec> run(const Value& root) {
    if (!is(root, Value::Kind::Object, "the profile")) return std::nullopt;
    known_keys(root, {"defaultAction", "defaultErrnoRet", "architectures", "archMap", "syscalls",
                      "flags", "listenerPath", "listenerMetadata"});
    const uint16_t default_errno = errno_of(root.find("defaultErrnoRet"), 1);
    ir::SyscallSpec spec;
    const Value* def = root.find("defaultAction");
    if (def == nullptr) {
      error(root, "missing 'defaultAction'");
    } else if (auto a = action(*def, default_errno)) {
      if (a->kind == ir::Action::Kind::Allow) {
        spec.style = ir::SyscallSpec::Style::DenyList;
        spec.action = {ir::Action::errno_(1), loc(*def)};
      } else {
        spec.style = ir::SyscallSpec::Style::AllowList;
        spec.action = {*a, loc(*def)};
      }
    }
    if (const Value* arches = root.find("architectures")) check_arch_list(*arches);
    if (const Value* map = root.find("archMap")) check_arch_map(*map);
    if (const Value* flags = root.find("flags")) string_list(*flags, "flags");
    if (const Value* calls = root.find("syscalls")) {
      if (is(*calls, Value::Kind::Array, "'syscalls'"))
        for (const auto& entry : calls->items) syscall_entry(entry, default_errno, spec);
    }
    if (diags_.has_errors()) return std::nullopt;
    return spec;
  }

 private:
  ir::SourceLoc loc(const Value& v) const { return {file_, v.line, v.col}; }
  void error(const Value& v, std::string message) { diags_.error(loc(v), std::move(message)); }

  bool is(const Value& v, Value::Kind k, const std::string& what) {
    if (v.kind == k) return true;
    Value want;
    want.kind = k;
    error(v, what + " must be " + want.kind_name() + ", not " + v.kind_name());
    return false;
  }

  void known_keys(const Value& obj, std::initializer_list<std::string_view> keys) {
    for (const auto& [k, v] : obj.members)
      if (std::find(keys.begin(), keys.end(), k) == keys.end())
        error(v, "unknown key '" + k + "'");
  }

  std::vector<std::string> string_list(const Value& v, const std::string& what) {
    std::vector<std::string> out;
    if (v.kind == Value::Kind::Null) return out;
    if (!is(v, Value::Kind::Array, "'" + what + "'")) return out;
    for (const auto& item : v.items)
      if (is(item, Value::Kind::String, "an entry of '" + what + "'")) out.push_back(item.text);
    return out;
  }

  uint16_t errno_of(const Value* v, uint16_t fallback) {
    if (v == nullptr) return fallback;
    const auto n = v->as_u64();
    if (!n || *n == 0 || *n > 4095) {
      error(*v, "an errno must be an integer in 1..4095");
      return fallback;
    }
    return static_cast<uint16_t>(*n);
  }

  std::optional<ir::Action> action(const Value& v, uint16_t errno_value) {
    if (!is(v, Value::Kind::String, "an action")) return std::nullopt;
    const std::string& a = v.text;
    if (a == "SCMP_ACT_ALLOW") return ir::Action::allow();
    if (a == "SCMP_ACT_ERRNO") return ir::Action::errno_(errno_value);
    if (a == "SCMP_ACT_KILL" || a == "SCMP_ACT_KILL_THREAD" || a == "SCMP_ACT_KILL_PROCESS")
      return ir::Action::kill();
    error(v, "action '" + a + "' has no zpolicy equivalent (allow, errno, kill)");
    return std::nullopt;
  }

  void check_arch_list(const Value& v) {
    for (const auto& a : string_list(v, "architectures"))
      if (a.rfind("SCMP_ARCH_", 0) != 0) error(v, "'" + a + "' is not an SCMP_ARCH_ name");
  }

  void check_arch_map(const Value& v) {
    if (v.kind == Value::Kind::Null || !is(v, Value::Kind::Array, "'archMap'")) return;
    for (const auto& m : v.items) {
      if (!is(m, Value::Kind::Object, "an archMap entry")) continue;
      known_keys(m, {"architecture", "subArchitectures"});
      if (const Value* a = m.find("architecture"); a == nullptr)
        error(m, "archMap entry without 'architecture'");
      else if (is(*a, Value::Kind::String, "'architecture'") && a->text.rfind("SCMP_ARCH_", 0) != 0)
        error(*a, "'" + a->text + "' is not an SCMP_ARCH_ name");
      if (const Value* s = m.find("subArchitectures")) string_list(*s, "subArchitectures");
    }
  }

  bool holds(const std::string& cap) const {
    return std::find(opts_.capabilities.begin(), opts_.capabilities.end(), cap) !=
           opts_.capabilities.end();
  }

  // Whether a conditional entry applies to the sandboxed process (see the header).
  bool applies(const Value* includes, const Value* excludes) {
    bool ok = true;
    auto filter = [&](const Value* f, bool include) {
      if (f == nullptr || f->kind == Value::Kind::Null) return;
      if (!is(*f, Value::Kind::Object, include ? "'includes'" : "'excludes'")) return;
      known_keys(*f, {"caps", "arches", "minKernel"});
      if (const Value* caps = f->find("caps")) {
        const auto list = string_list(*caps, "caps");
        if (include && !std::all_of(list.begin(), list.end(), [&](auto& c) { return holds(c); }))
          ok = false;
        if (!include && std::any_of(list.begin(), list.end(), [&](auto& c) { return holds(c); }))
          ok = false;
      }
      if (const Value* arches = f->find("arches")) {
        const auto list = string_list(*arches, "arches");
        const bool named = std::find(list.begin(), list.end(), opts_.arch) != list.end();
        if (include && !list.empty() && !named) ok = false;
        if (!include && named) ok = false;
      }
      if (const Value* k = f->find("minKernel")) {
        if (!include) error(*k, "'minKernel' is only meaningful in 'includes'");
        else is(*k, Value::Kind::String, "'minKernel'");
      }
    };
    filter(includes, true);
    filter(excludes, false);
    return ok;
  }

  std::optional<ir::ArgCondition> condition(const Value& v) {
    if (!is(v, Value::Kind::Object, "an argument condition")) return std::nullopt;
    known_keys(v, {"index", "value", "valueTwo", "op"});
    const Value* index = v.find("index");
    const Value* value = v.find("value");
    const Value* op = v.find("op");
    if (!index || !value || !op) {
      error(v, "an argument condition needs 'index', 'value' and 'op'");
      return std::nullopt;
    }
    const auto i = index->as_u64();
    if (!i || *i > 5) {
      error(*index, "'index' must be an argument index 0..5");
      return std::nullopt;
    }
    const auto val = value->as_u64();
    if (!val) {
      error(*value, "'value' must be an unsigned 64-bit integer");
      return std::nullopt;
    }
    uint64_t two = 0;
    if (const Value* t = v.find("valueTwo")) {
      const auto n = t->as_u64();
      if (!n) {
        error(*t, "'valueTwo' must be an unsigned 64-bit integer");
        return std::nullopt;
      }
      two = *n;
    }
    if (!is(*op, Value::Kind::String, "'op'")) return std::nullopt;
    ir::ArgCondition c;
    c.index = static_cast<unsigned>(*i);
    c.value = *val;
    const std::string& o = op->text;
    if (o == "SCMP_CMP_EQ") c.op = ir::CmpOp::Eq;
    else if (o == "SCMP_CMP_NE") c.op = ir::CmpOp::Ne;
    else if (o == "SCMP_CMP_LT") c.op = ir::CmpOp::Lt;
    else if (o == "SCMP_CMP_LE") c.op = ir::CmpOp::Le;
    else if (o == "SCMP_CMP_GT") c.op = ir::CmpOp::Gt;
    else if (o == "SCMP_CMP_GE") c.op = ir::CmpOp::Ge;
    else if (o == "SCMP_CMP_MASKED_EQ") {
      c.op = ir::CmpOp::MaskedEq;
      c.mask = *val;
      c.value = two;
    } else {
      error(*op, "unknown comparison '" + o + "'");
      return std::nullopt;
    }
    return c;
  }

  void syscall_entry(const Value& e, uint16_t default_errno, ir::SyscallSpec& spec) {
    if (!is(e, Value::Kind::Object, "a 'syscalls' entry")) return;
    known_keys(e, {"names", "name", "action", "errnoRet", "args", "comment", "includes",
                   "excludes"});
    const Value* act = e.find("action");
    if (act == nullptr) {
      error(e, "a 'syscalls' entry needs an 'action'");
      return;
    }
    const auto a = action(*act, errno_of(e.find("errnoRet"), default_errno));
    std::vector<ir::ArgCondition> conds;
    bool conds_ok = true;
    if (const Value* args = e.find("args"); args && args->kind != Value::Kind::Null) {
      if (is(*args, Value::Kind::Array, "'args'")) {
        for (const auto& c : args->items) {
          auto cond = condition(c);
          if (cond) conds.push_back(*cond);
          else conds_ok = false;
        }
      }
    }
    std::vector<const Value*> names;
    if (const Value* n = e.find("names"); n && is(*n, Value::Kind::Array, "'names'"))
      for (const auto& item : n->items)
        if (is(item, Value::Kind::String, "a syscall name")) names.push_back(&item);
    if (const Value* n = e.find("name"); n && is(*n, Value::Kind::String, "'name'"))
      names.push_back(n);
    if (names.empty()) error(e, "a 'syscalls' entry names no syscall");
    const bool apply = applies(e.find("includes"), e.find("excludes"));
    if (!a || !conds_ok || !apply) return;
    for (const Value* n : names) spec.rules.push_back({n->text, *a, conds, loc(*n)});
  }

  const std::string& file_;
  ir::Diagnostics& diags_;
  const OciImportOptions& opts_;
};

}  // namespace

std::optional<ir::SyscallSpec> import_oci_seccomp(std::string_view json_text,
                                                  const std::string& file,
                                                  ir::Diagnostics& diags,
                                                  const OciImportOptions& options) {
  json::ParseError perr;
  const auto root = json::parse(json_text, &perr);
  if (!root) {
    diags.error({file, perr.line, perr.col}, perr.message);
    return std::nullopt;
  }
  return Importer(file, diags, options).run(*root);
}

}  // namespace zpolicy::compiler

#pragma once

#include <string>
#include <vector>

#include "compiler/analyzer/sbpl/sbpl_evaluator.hpp"
#include "ir/resolved.hpp"
#include "ir/result.hpp"

// Where symbolic roots of a portable profile can lie inside one another (`${WORKSPACE}`
// inside `${HOME}`, and `${TMPDIR}` inside that), reduced to one place per class of places
// that the profile and the policy cannot tell apart (docs/verify.md, "Nested symbolic
// roots"). verify_sbpl proves the profile with the roots bound to each representative.
namespace zpolicy::compiler {

// One root of a chain, bound inside the one before it.
struct NestedStep {
  std::string root;    // bound to `place`
  std::string inside;  // the root before it in the chain, which holds `place`
  std::string place;   // written below the chain's first root: `${HOME}/.ssh/zp-bind`
  size_t stands_for = 1;  // the places of its class, the roots before it where they are
};

// A chain of nested roots: the first step's `inside` is the chain's first root, left
// symbolic or bound to the concrete place `top`; each later step's root lies at or below
// the place of the one before.
struct NestedChain {
  std::string top;  // empty: the first root is left symbolic; else a concrete place (/Users)
  std::vector<NestedStep> steps;
};

// The most classes of places for one root inside one chain, and chains in all: each is a
// proof of the bound root's tree, which is what bounds the time of a hostile profile
// (docs/verify.md, "Bounds"). Both are above what zpolicy's own profiles need
// (docs/benchmarks.md, "Where the nested proof's bounds come from").
inline constexpr size_t kMaxNestedClasses = 64;
inline constexpr size_t kMaxNestedProofs = 1024;

// The work of the nested proof, in filters and parameters bound (each proof binds the
// whole profile again) and paths read while the classes are found: past it, a profile is
// refused before any proof runs, so that any profile under 1 MiB is answered within issue
// 19's 2 s.
inline constexpr size_t kMaxNestedWork = size_t{1} << 20;

// Every chain of two or more of `roots` (symbolic roots, `${NAME}`), each root bound at or
// below the place of the one before, the first left symbolic or bound to one of the
// concrete places `tops` (those a root bound alone is proved at: docs/verify.md, "Portable
// profiles"), one chain per class: the places of a root inside the
// place of the root before are that place, each path below it that `bound` (the profile
// with its parameters bound to their symbolic values) or `policy` names with the chain
// bound, a child of each that nothing names, and the directories between; grouped by what
// decides the answers in the bound root's tree (the path filters and policy entries at,
// above and below the place, each below one by its path relative to the place, with the
// names that neither this root's own paths nor those of a root that can still come below
// use abstracted to their rank and length). Shorter chains first; within a length, in the
// order of the chain they extend (the symbolic first roots before those at `tops`), then
// of the root, then of the place in byte order. `proof_work` is what one proof costs in
// kMaxNestedWork's measure (the profile's filters and parameters); each class search
// costs the paths it reads; `spent` is the work done before (the proofs of each root
// alone at a concrete place), counted against the same bound. Chains of at most
// `max_steps` roots bound inside another (the first root, at a top or not, is not
// counted): those of fewer are the same whatever `max_steps`, and come first.
// `policy_tops` are concrete places (those of the policy's own paths) where a first root
// is bound too, with chains as under `tops`: within each length, those under them come
// after those under `tops` (docs/verify.md, "Under a place the policy names"). Past the
// bounds above, the malformed-artifact finding that refuses the profile.
ir::Result<std::vector<NestedChain>> nested_chains(
    const ir::Resolved& policy, const SbplProfile& bound, const std::vector<std::string>& roots,
    const std::vector<std::string>& tops, size_t proof_work, size_t max_steps, size_t spent = 0,
    const std::vector<std::string>& policy_tops = {});

}  // namespace zpolicy::compiler

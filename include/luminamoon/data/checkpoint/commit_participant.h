// CommitParticipant: persistent state of a later stage (e.g. the MinHash LSH index) that commits
// together with a StateTracker, so that after a crash it opens consistent with the active slot.
//
// StateTracker::commit() walks one participant list: prepare_commit(e) of every attached
// participant in order (each makes exactly the state staged at that moment durable, tagged with
// the epoch e the slot is about to carry), then the slot write, then finish_commit() of every
// participant (RAM only: promote exactly what prepare_commit wrote; anything staged since stays
// staged for the next commit). The exact StreamDeduplicator is always first: its prepare step is
// the .dedup WAL append + fdatasync (SPEC 3.3 step 1), so the order stays WAL, companions, slot,
// RAM. A crash before the slot lands leaves companion records tagged e while the active epoch is
// e - 1: on open, a participant ignores and cuts everything tagged with an epoch above the active
// one (EpochLog does this).
//
// A participant with a companion_kind() is recorded in the tracker's participant registry
// (`<meta>.participants`) by the first commit it joins; from then on every commit of that
// checkpoint must include it (StateTracker::commit refuses otherwise), so its companion file
// must always carry exactly the active epoch, and a missing, emptied or stale companion is
// detected as corruption instead of silently opening as an empty index.
#pragma once

#include <cstdint>
#include <string_view>

namespace luminamoon::data {

class CommitParticipant {
 public:
  virtual ~CommitParticipant() = default;

  // Whether anything is staged since the last commit/rollback (StateTracker::has_pending).
  virtual bool has_staged() const = 0;

  // Make the staged state durable, tagged with `epoch` (fsync unless `durable` is false). May
  // throw; the commit is then abandoned: no slot is written, nothing is promoted, the staged
  // state stays staged.
  virtual void prepare_commit(std::uint64_t epoch, bool durable) = 0;

  // The slot of `epoch` is durable: staged -> committed in RAM. Must not fail.
  virtual void finish_commit() noexcept = 0;

  // Drop everything staged since the last commit.
  virtual void drop_staged() noexcept = 0;

  // The tracker was closed: further commits through it are impossible.
  virtual void tracker_closed() noexcept = 0;

  // The companion file kind recorded in the participant registry ("minhash" for
  // `<meta>.minhash`); empty for state the slot itself accounts for (the .dedup WAL, whose
  // committed length is the slot's dedup_count).
  virtual std::string_view companion_kind() const noexcept { return {}; }
};

}  // namespace luminamoon::data

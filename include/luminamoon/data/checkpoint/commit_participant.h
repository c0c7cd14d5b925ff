// CommitParticipant: persistent state of a later stage (e.g. the MinHash LSH index) that commits
// together with a StateTracker, so that after a crash it opens consistent with the active slot.
//
// StateTracker::commit() runs, in order: the exact-dedup WAL append (SPEC 3.3 step 1), then
// prepare_commit(e) of every attached participant (each makes its staged state durable in its
// own companion file, tagged with the epoch e the slot is about to carry), then the slot write
// (step 2), then finish_commit() of every participant (step 3, RAM only). A crash before the slot
// lands leaves companion records tagged e while the active epoch is e - 1: on open, a participant
// ignores and cuts everything tagged with an epoch above the active one (EpochLog does this).
#pragma once

#include <cstdint>

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
};

}  // namespace luminamoon::data

// The native module luminamoon.data._native: one bind_* function per component file.
#include "common.h"

NB_MODULE(_native, m) {
  m.doc() = "LuminaMoon Data Engine native core (C++20). Use it through luminamoon.data.";
  using namespace luminamoon::data::bindings;
  bind_errors(m);
  bind_common(m);
  bind_build_info(m);
  bind_checkpoint(m);
  bind_dedup(m);
  bind_quality(m);
  bind_minhash(m);
  bind_cleaner(m);
  bind_readers(m);
  bind_pii(m);
  bind_string_tensor(m);
  bind_pipeline(m);
  bind_prefetch(m);
}

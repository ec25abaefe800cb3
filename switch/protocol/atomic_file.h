// WriteFileAtomically: replaces a file whole, so that a reader (hvswitch --config at the
// next start) sees the old contents or the new, never a mix, even across a crash.
// The new contents go to a temporary file created beside the target with O_EXCL (it never
// opens an existing file, a symlink or a FIFO someone planted), are synced, keep the
// target's mode and owner, and replace the target by rename (which replaces a symlink or
// FIFO at the path, never what it points to). Used by the daemon for its own
// configuration file and by hvswitchctl, with its caller's rights, for the file it names.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hvswitch {

// `mode`: of a new file (an existing regular file keeps its own).
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 unsigned mode = 0644);

}  // namespace hvswitch

// The requests hvswitchctl sends, executed on the bridge by the control thread. Each
// request is one line of words (`port list`, `fdb show --port vm1`, ...), parsed with the
// command table (switch/protocol/commands.h); each answer one JSON object: {"ok":true, ...} or
// {"ok":false,"error":"one line"}. hvswitchctl renders the same objects as tables;
// scripts take them with --json.
#pragma once

#include <string>

#include "switch/control/bridge_control.h"
#include "switch/control/control_socket.h"
#include "switch/control/options.h"

namespace hvswitch {

// `options`: what the daemon was started with (config save writes them with the current
// ports and static MACs, and so does every port or static MAC change under --save_config;
// the runtime directory and control socket bound what a --ctl_group member may do, see
// switch/control/control_policy.h). The request's descriptor is owned from here on. Never throws.
ControlAnswer ExecuteControlCommand(BridgeControl& bridge, const DaemonOptions& options,
                                    const ControlRequest& request);

}  // namespace hvswitch

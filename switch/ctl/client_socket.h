// hvswitchctl's end of the control socket (switch/control/control_socket.h): one request line per
// connection, with a descriptor attached when asked, and the daemon's one-line answer.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace hvswitch::ctl {

// A connection to the daemon, or -1 with `error` set.
int Connect(const std::string& path, std::string* error);

// Sends one request line, with `fd` attached when >= 0.
bool SendRequest(int sock, const std::string& request, int fd);

// Reads one answer line (without its newline); empty when none came.
std::string ReadLine(int sock);

// Sends one request line (with `fd` attached when >= 0), returns the answer line; empty
// with `error` set on failure.
std::string Ask(const std::string& path, const std::string& request, std::string* error,
                int fd = -1);

// A failure: one line on stderr; returns `code`, the exit status.
int Fail(const std::string& message, int code);

// A refused request: its error on stderr; the exit status, 2 when the caller may not ask it.
int Refused(const nlohmann::json& answer);

// Asks the daemon. 0 with `answer` set when it said ok; else the error is printed and
// the exit status returned (2: no daemon to talk to).
int AskOk(const std::string& path, const std::string& request, nlohmann::json& answer);

}  // namespace hvswitch::ctl

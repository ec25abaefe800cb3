// What an interposed libc call (ports/memif/memseg_fd_guard.h, ports/memif/unmap_guard.h,
// ports/peer_socket_guard.h) hands on to: the sanitizer's interceptor when a sanitizer runtime
// is linked in (it defines __interceptor_NAME, whose libc name our definition replaces),
// so that AddressSanitizer and ThreadSanitizer still see every descriptor and mapping;
// otherwise the kernel.
#pragma once

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstddef>

extern "C" {
int __interceptor_close(int fd) __attribute__((weak));
int __interceptor_connect(int fd, const sockaddr* addr, socklen_t len) __attribute__((weak));
int __interceptor_accept(int fd, sockaddr* addr, socklen_t* len) __attribute__((weak));
int __interceptor_munmap(void* addr, size_t length) __attribute__((weak));
}

namespace hvswitch::interposed {

inline int Close(int fd) {
  return __interceptor_close != nullptr ? __interceptor_close(fd)
                                        : static_cast<int>(syscall(SYS_close, fd));
}
inline int Connect(int fd, const sockaddr* addr, socklen_t len) {
  return __interceptor_connect != nullptr
             ? __interceptor_connect(fd, addr, len)
             : static_cast<int>(syscall(SYS_connect, fd, addr, len));
}
inline int Accept(int fd, sockaddr* addr, socklen_t* len) {
  return __interceptor_accept != nullptr ? __interceptor_accept(fd, addr, len)
                                         : static_cast<int>(syscall(SYS_accept, fd, addr, len));
}
inline int Munmap(void* addr, size_t length) {
  return __interceptor_munmap != nullptr ? __interceptor_munmap(addr, length)
                                         : static_cast<int>(syscall(SYS_munmap, addr, length));
}

}  // namespace hvswitch::interposed

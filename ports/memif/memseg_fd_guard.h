// MemsegFdGuard: keeps the EAL's memory file descriptors open while memif zero-copy ports
// come and go.
//
// Why: a zero-copy memif client shares hvswitch's memory with its peer by the descriptors
// of the EAL's memory segment lists (rte_memseg_get_fd): the EAL's own, not copies. When
// such a port disconnects, DPDK 22.11's memif PMD (memif_free_regions) closes them. The
// next connection would send the peer a closed descriptor, or whatever file has taken its
// number since (seen here: a restarted peer refuses the connection). hvswitch defines
// close() itself (exported from the executable, as munmap for unmap_guard.h): a
// close of a protected descriptor is skipped; every other close goes to the kernel.
#pragma once

namespace hvswitch::memseg_fd_guard {

// Control thread: protects the descriptors of every memory segment in use now. Called
// before a zero-copy port connects (the EAL may have added segment lists since).
void ProtectMemsegFds();

// True while `fd` is protected.
bool Protects(int fd);

}  // namespace hvswitch::memseg_fd_guard

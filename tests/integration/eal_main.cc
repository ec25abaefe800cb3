// One EAL for every integration test: no hugepages, no PCI, no shared files. Three lcores
// float over the machine's CPUs so that tests can launch two workers beside the main one.
#include <rte_eal.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <iterator>

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const char* eal[] = {"datapath_test", "--no-huge", "--no-pci", "--no-shconf", "-m", "768",
                       "--lcores=(0-2)@(0-1)", "--log-level=lib.eal:error"};
  if (rte_eal_init(static_cast<int>(std::size(eal)), const_cast<char**>(eal)) < 0) {
    std::fprintf(stderr, "cannot init EAL\n");
    return 1;
  }
  int rc = RUN_ALL_TESTS();
  rte_eal_cleanup();
  return rc;
}

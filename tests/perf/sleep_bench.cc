// What a worker's sleep really lasts on this machine (--idle=sleep): clock_nanosleep of
// 1 us .. 1 ms, as the worker calls it (CLOCK_MONOTONIC, relative) with its timer slack of
// 1 ns and with the default (50 us), timed with the TSC. Prints per requested length the
// median, 99th percentile and maximum of the actual sleep, and the CPU time the thread
// used per sleep (the cost of a wake-up).
//
// usage: sleep_bench [--samples=N]   (run under flock /tmp/cpu-bench.lock)
#include <sys/prctl.h>
#include <sys/resource.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

namespace {

double TscPerNs() {
  const auto t0 = std::chrono::steady_clock::now();
  const uint64_t c0 = __rdtsc();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const uint64_t c1 = __rdtsc();
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
  return static_cast<double>(c1 - c0) / static_cast<double>(ns);
}

double ThreadCpuNs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

void Measure(const char* slack_name, unsigned long slack_ns, int samples, double tsc_per_ns) {
  prctl(PR_SET_TIMERSLACK, slack_ns, 0, 0, 0);
  for (long request_ns : {1000L, 2000L, 5000L, 10000L, 20000L, 50000L, 100000L, 250000L,
                          1000000L}) {
    std::vector<double> actual(samples);
    const double cpu0 = ThreadCpuNs();
    for (int i = 0; i < samples; ++i) {
      const timespec duration{0, request_ns};
      const uint64_t before = __rdtsc();
      clock_nanosleep(CLOCK_MONOTONIC, 0, &duration, nullptr);
      actual[i] = static_cast<double>(__rdtsc() - before) / tsc_per_ns;
    }
    const double cpu_per_sleep = (ThreadCpuNs() - cpu0) / samples;
    std::sort(actual.begin(), actual.end());
    std::printf("%-8s %8.1f %10.1f %10.1f %10.1f %12.2f\n", slack_name, request_ns / 1e3,
                actual[samples / 2] / 1e3, actual[samples * 99 / 100] / 1e3,
                actual.back() / 1e3, cpu_per_sleep / 1e3);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int samples = 2000;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--samples=", 10) == 0) samples = std::atoi(argv[i] + 10);
  }
  if (samples < 100) samples = 100;
  const double tsc_per_ns = TscPerNs();
  std::printf("clock_nanosleep, %d samples each (us; cpu: the thread's CPU time per sleep)\n",
              samples);
  std::printf("%-8s %8s %10s %10s %10s %12s\n", "slack", "request", "median", "p99", "max",
              "cpu/sleep");
  Measure("1ns", 1, samples, tsc_per_ns);
  Measure("default", 50000, samples, tsc_per_ns);
  return 0;
}

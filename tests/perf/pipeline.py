#!/usr/bin/env python3
"""Benchmark 1: the forwarding pipeline over net_ring ports at 2, 1k, 100k and 1M learned
MACs, beside a bare rx->tx loop on the same ports (the floor): every frame a random pair
of its own ("random pairs", the MAC count alone), or runs of 8-32 frames per pair
(":runs", as guests send); and each with every guard on the receiving port, none
triggered (":guards": policing by frames and bytes, storm control, BPDU guard).

Runs build/tests/pipeline_bench twice over: under Google Benchmark for ns and TSC cycles
per packet (noisy on this VM: --repetitions medians), and under
`valgrind --tool=callgrind` for instructions per packet (deterministic; this VM has no
hardware counters). Prints one table with the ratios the issue asks for.

usage: pipeline.py [--repetitions 3] [--packets 100000]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BENCH = os.environ.get("PIPELINE_BENCH", os.path.join(ROOT, "build", "tests", "pipeline_bench"))
CASES = [("bare", "BM_BareLoop"), ("2", "BM_Pipeline/2"), ("1000", "BM_Pipeline/1000"),
         ("100000", "BM_Pipeline/100000"), ("1000000", "BM_Pipeline/1000000"),
         ("1000:runs", "BM_PipelineRuns/1000"), ("100000:runs", "BM_PipelineRuns/100000"),
         ("1000000:runs", "BM_PipelineRuns/1000000"), ("2:guards", "BM_PipelineGuards/2"),
         ("1000:guards", "BM_PipelineGuards/1000"),
         ("1000:runs:guards", "BM_PipelineRunsGuards/1000")]


def timings(repetitions):
    out = subprocess.run([BENCH, "--benchmark_format=json", "--benchmark_min_time=1",
                          f"--benchmark_repetitions={repetitions}",
                          "--benchmark_report_aggregates_only=true"],
                         check=True, capture_output=True, text=True).stdout
    result = {}
    for b in json.loads(out)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            result[b["run_name"]] = (b["ns_per_packet"], b["cycles_per_packet"])
    return result


def instructions(case, packets):
    with tempfile.TemporaryDirectory() as tmp:
        out_file = os.path.join(tmp, "callgrind.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=*MeasuredLoop*",
                        f"--callgrind-out-file={out_file}", BENCH, f"--instructions={case}",
                        f"--packets={packets}"], check=True, capture_output=True)
        with open(out_file) as f:
            total = re.search(r"^(?:summary|totals): (\d+)", f.read(), re.M)
        return int(total.group(1)) / packets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--packets", type=int, default=100000)
    args = parser.parse_args()
    times = timings(args.repetitions)
    rows = []
    for case, name in CASES:
        ns, cycles = times[name]
        ns *= 1e9  # Google Benchmark reports the inverted rate in seconds
        rows.append((case, ns, cycles, instructions(case, args.packets)))
    print(f"{'MACs':>12} {'ns/pkt':>8} {'cycles/pkt':>11} {'instr/pkt':>10} {'Mpps':>7}")
    for case, ns, cycles, instr in rows:
        print(f"{case:>12} {ns:8.1f} {cycles:11.1f} {instr:10.1f} {1000 / ns:7.2f}")
    by_case = {r[0]: r for r in rows}
    print(f"rate at 1M MACs / rate at 2 MACs: {by_case['2'][1] / by_case['1000000'][1]:.2f}"
          " (target >= 0.8)")
    print(f"rate at 1M MACs / rate at 1k MACs: {by_case['1000'][1] / by_case['1000000'][1]:.2f}"
          " (target >= 0.8)")
    print(f"runs: rate at 1M MACs / rate at 1k MACs: "
          f"{by_case['1000:runs'][1] / by_case['1000000:runs'][1]:.2f}")
    print(f"instructions/packet at 2 MACs / bare loop: "
          f"{by_case['2'][3] / by_case['bare'][3]:.2f} (target <= 1.5)")
    for case in ("2", "1000", "1000:runs"):
        print(f"guards on, none triggered, at {case}: "
              f"{by_case[case + ':guards'][3] - by_case[case][3]:+.1f} instructions/packet, "
              f"rate {by_case[case][1] / by_case[case + ':guards'][1]:.2f} of guards off "
              "(targets <= 10, >= 0.9)")


if __name__ == "__main__":
    sys.exit(main())

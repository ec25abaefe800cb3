"""Runs meson's tests of a sanitizer build (deploy/sanitize.sh MODE) and fails on any report.

The tests are those meson defines (taken from `meson introspect --tests`, so a new unit,
integration or e2e test is covered without a change here), run one at a time with their
own command and environment plus the sanitizers' options:
  asan: every unit, integration, e2e and soak test but those needing QEMU;
  tsan: the multi-worker integration tests and the FDB table's readers beside its writer
        (gtest filter), and the port-churn e2e test,
        with the guests from build/ (uninstrumented: their only other threads are DPDK's
        own interrupt threads, whose fd handling TSan cannot judge).
`deploy/sanitize.sh MODE NAME...` runs only the tests of these names.
Every process a test starts (the test, the daemon, guests, hvswitchctl) inherits
log_path=BUILD/sanitizer-logs/TEST/{asan,ubsan,tsan}, so that its reports land in files
whatever becomes of its output (a daemon's log in a temporary directory, a process killed
by the test). A test passes only if it exits 0 AND no report file appeared. Each test runs
in a process group of its own, killed whole at its time limit.
"""
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUPPRESSIONS = os.path.join(ROOT, "tests", "sanitizers")
NEEDS_QEMU = "qemu_guests"  # and its runs in other idle modes (qemu_guests_interrupt)
# Runs deploy/quickstart.sh, which builds and runs build/'s binaries, not these; runs the
# daemon inside a VM (an instrumented binary there would need the sanitizer's runtime
# copied in, and TCG makes it minutes more); QEMU under libvirt, minutes of TCG more.
NOT_OURS = {"quickstart", "nic_vm", "libvirt"}
TIME_FACTOR = {"asan": 3, "tsan": 5}  # the sanitizers' slowdown, on meson's time limits


def introspect(build, what):
    out = subprocess.run(["meson", "introspect", what, build], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def selected(mode, tests):
    """(test, extra arguments, environment overrides) to run in this mode."""
    def suites(t):
        return {s.split(":")[-1] for s in t["suite"]}
    for t in tests:
        if mode == "asan":
            if suites(t) & {"unit", "integration", "soak"} or (
                    "e2e" in suites(t) and not t["name"].startswith(NEEDS_QEMU)
                    and t["name"] not in NOT_OURS):
                yield t, [], {}
        elif t["name"] == "datapath":
            yield t, ["--gtest_filter=WorkersTest.*:"
                      "FdbTableTest.ReadersNeverSeeATornEntryWhileTheWriterChurns"], {}
        elif t["name"] == "port_churn":
            yield t, [], {"HVS_GUEST": os.path.join(ROOT, "build", "tests", "hvs_guest")}


def sanitizer_env(mode, logs):
    env = {
        # ASan halts at its first report by itself; UBSan and TSan go on, so that one run
        # shows every report (each fails the test all the same).
        "ASAN_OPTIONS": f"log_path={logs}/asan:detect_leaks=1:halt_on_error=1",
        "UBSAN_OPTIONS": f"log_path={logs}/ubsan:print_stacktrace=1:halt_on_error=0",
        "TSAN_OPTIONS": (f"log_path={logs}/tsan:halt_on_error=0:history_size=4:"
                         f"second_deadlock_stack=1:"
                         f"suppressions={os.path.join(SUPPRESSIONS, 'tsan.supp')}"),
    }
    return env


def run_one(build, mode, test, extra, overrides):
    # Suite and name: unit/offload and e2e/offload are two tests.
    name = test["suite"][0].split(":")[-1] + "-" + test["name"]
    logs = os.path.join(build, "sanitizer-logs", name)
    os.makedirs(logs, exist_ok=True)
    for f in os.listdir(logs):
        os.remove(os.path.join(logs, f))
    env = dict(os.environ)
    env.update(test["env"])
    env.update(overrides)
    env.update(sanitizer_env(mode, logs))
    limit = test["timeout"] * TIME_FACTOR[mode]
    output = os.path.join(build, "sanitizer-logs", f"{name}.out")
    start = time.monotonic()
    with open(output, "wb") as out:
        proc = subprocess.Popen(test["cmd"] + extra, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                cwd=test["workdir"] or build)  # as meson test does
        try:
            rc = proc.wait(limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = f"timeout after {limit} s"
    seconds = time.monotonic() - start
    reports = sorted(os.listdir(logs))
    if rc == 0 and not reports:
        print(f"ok   {mode} {name} ({seconds:.0f} s)", flush=True)
        return True
    print(f"FAIL {mode} {name} ({seconds:.0f} s): exit {rc}, {len(reports)} sanitizer "
          f"report file(s) in {logs}", flush=True)
    with open(output, errors="replace") as f:
        tail = f.read()[-4000:]
    print(f"---- {name}: last output ----\n{tail}")
    for report in reports:
        with open(os.path.join(logs, report), errors="replace") as f:
            print(f"---- {name}: {report} ----\n{f.read()[:20000]}")
    return False


def main():
    mode, build, only = sys.argv[1], os.path.abspath(sys.argv[2]), set(sys.argv[3:])
    # Reconfigured first when a meson.build changed: the test list read below is then current.
    subprocess.run(["ninja", "-C", build, "build.ninja"], check=True, capture_output=True)
    chosen = [c for c in selected(mode, introspect(build, "--tests"))
              if not only or c[0]["name"] in only]
    # Build only what the chosen tests run (not the benchmarks).
    wanted = {d for t, _, _ in chosen for d in t["depends"]}
    targets = [os.path.relpath(t["filename"][0], build)
               for t in introspect(build, "--targets") if t["id"] in wanted]
    built = subprocess.run(["ninja", "-C", build] + targets, capture_output=True, text=True)
    if built.returncode != 0:
        sys.exit(f"sanitize {mode}: build failed\n{built.stdout[-20000:]}{built.stderr}")
    results = [run_one(build, mode, t, extra, env) for t, extra, env in chosen]
    passed = sum(results)
    print(f"sanitize {mode}: {passed} passed, {len(results) - passed} failed")
    sys.exit(0 if passed == len(results) else 1)


if __name__ == "__main__":
    main()

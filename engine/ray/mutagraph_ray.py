#!/usr/bin/env python3
"""A mutagraph campaign as N instances on a Ray cluster, or on a local Ray.

Usage:
  python3 engine/ray/mutagraph_ray.py --sync-dir SYNC --instances N --time 1h
      [--binary PATH] [--address auto|HOST:PORT] [--cpus-per-instance 2] [--seed S]
      [--max-restarts 10] [--stop-grace 2m] [--] [extra campaign args...]

Instance iK is one `mutagraph campaign` process, run by a Ray actor that reserves
--cpus-per-instance CPUs, whose output directory is SYNC/iK, on a filesystem that every node
mounts at the same path (`--sync-dir SYNC --instance iK` when the binary's campaign has those
flags, else `--out SYNC/iK`). Its random seed is --seed + K: instances sharing one would repeat
each other's work. The extra arguments go to every instance (`--seeds zoo` unless they name
seeds or a --config).

--time is the wall-clock length of the whole run. An instance whose process ends before it (a
non-zero exit, a signal, its Ray worker or node lost) is restarted with the same command line
and the time left, and resumes from its directory; exit 0 is an instance that finished, exit 2
a command line mutagraph refused (not retried). At most --max-restarts restarts per instance,
1, 2, 4, 8, then 10 s apart; past that the instance fails with the end of its output, and the
launcher's exit status is 1. The restarts are this process's supervising loop (see
mutagraph_ray_lib/supervisor.py for why not Ray's actor restarts).

SIGINT or SIGTERM sends SIGINT to every instance, which ends cleanly (a second one: at once).
An instance still running --stop-grace after the time limit gets SIGTERM, SIGKILL 30 s later.

Written in SYNC: ray-launcher.json (atomically at each change: per instance its state,
restarts, exit codes and each run's node, pid, start and end in Unix time, and command line),
ray-launcher.log (this log), ray-iK.log (instance iK's output).
"""

from __future__ import annotations

import argparse
import fcntl
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

RAY_VERSION = "2.60.0"  # the one .ci/setup installs

try:
    import ray
except ImportError:
    sys.exit(f"mutagraph_ray: the ray package is missing: pip install ray=={RAY_VERSION} "
             "(bash .ci/setup installs it)")

import mutagraph_ray_lib
from mutagraph_ray_lib.runner import Plan
from mutagraph_ray_lib.supervisor import Launcher, Settings

# Variables of the launcher's environment that the instances get (Ray workers have the
# environment of `ray start`, not the driver's).
FORWARDED_ENV = re.compile(r"^(MUTAGRAPH_\w+|ORT_DYLIB_PATH|RUST_LOG|RUST_BACKTRACE)$")
# Flags the launcher sets per instance: not accepted among the campaign arguments.
OWN_FLAGS = ("--out", "--sync-dir", "--instance", "--time", "--seed")

log = logging.getLogger("mutagraph_ray")


def parse_duration(text: str) -> float:
    """Seconds in a duration written as mutagraph takes them: 90, 90s, 10m, 1h30m, 250ms, 2d."""
    text = text.strip()
    try:
        seconds = float(text)
    except ValueError:
        parts = re.findall(r"(\d+(?:\.\d*)?)(ms|s|min|m|h|d)", text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise argparse.ArgumentTypeError(f"bad duration {text!r} (examples: 90s, 10m, 1h30m)")
        unit = {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
        seconds = sum(float(n) * unit[u] for n, u in parts)
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"duration {text!r} is not positive")
    return seconds


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The launcher's arguments, and the campaign's (after `--`, or those it does not know)."""
    p = argparse.ArgumentParser(
        prog="mutagraph_ray.py", allow_abbrev=False,
        description="A mutagraph campaign as N instances on a Ray cluster; the arguments after "
                    "-- go to every `mutagraph campaign`. Restarts, signals and the record: "
                    "see the docstring of engine/ray/mutagraph_ray.py.")
    p.add_argument("--sync-dir", required=True, type=Path,
                   help="the run's directory (instance iK writes SYNC/iK), on a filesystem that "
                        "every node mounts at the same path")
    p.add_argument("--instances", required=True, type=int, help="how many instances")
    p.add_argument("--time", required=True, type=parse_duration,
                   help="wall-clock length of the whole run (90s, 10m, 1h30m)")
    p.add_argument("--binary", help="the mutagraph binary, at the same path on every node "
                                    "(default: target/release/mutagraph, else mutagraph on PATH)")
    p.add_argument("--address", help="the Ray cluster: auto (the one this node is part of) or "
                                     "HOST:PORT (default: RAY_ADDRESS, else a local Ray started "
                                     "for this run)")
    p.add_argument("--cpus-per-instance", type=float, default=2,
                   help="CPUs Ray reserves for each instance (default 2); the campaign's own "
                        "parallelism is its -j")
    p.add_argument("--seed", type=int, default=0, help="instance iK gets --seed S+K (default 0)")
    p.add_argument("--max-restarts", type=int, default=10,
                   help="restarts allowed per instance (default 10)")
    p.add_argument("--stop-grace", type=parse_duration, default=120.0,
                   help="how long past the time limit an instance may take to end before it is "
                        "sent SIGTERM (default 2m)")
    if "--" in argv:
        cut = argv.index("--")
        args, extra = p.parse_args(argv[:cut]), argv[cut + 1:]
    else:
        args, extra = p.parse_known_args(argv)
    for flag in OWN_FLAGS:
        if any(a == flag or a.startswith(flag + "=") for a in extra):
            p.error(f"{flag} among the campaign arguments: the launcher sets it per instance")
    if args.instances < 1:
        p.error("--instances must be at least 1")
    if args.cpus_per_instance <= 0 or args.max_restarts < 0:
        p.error("--cpus-per-instance must be positive, --max-restarts at least 0")
    if not any(a.split("=")[0] in ("--seeds", "--config") for a in extra):
        extra = ["--seeds", "zoo", *extra]
    return args, extra


def find_binary(given: str | None) -> str:
    if given:
        candidates = [given]
    else:
        repo = Path(__file__).resolve().parents[2]
        target = Path(os.environ.get("CARGO_TARGET_DIR", repo / "target"))
        candidates = [str(target / "release" / "mutagraph"), shutil.which("mutagraph") or ""]
    for c in filter(None, candidates):
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.abspath(c)
    sys.exit(f"mutagraph_ray: no mutagraph binary at {' or '.join(filter(None, candidates))}: "
             "build it (cargo build --release) or give --binary PATH")


def has_sync_flags(binary: str) -> bool:
    """Whether the binary's campaign has --sync-dir and --instance."""
    help_text = subprocess.run([binary, "campaign", "--help"], capture_output=True,
                               text=True).stdout
    return "--sync-dir" in help_text and "--instance" in help_text


def connect(args: argparse.Namespace) -> None:
    """Joins the Ray cluster, or starts a local Ray with a CPU for each one reserved."""
    need = args.instances * args.cpus_per_instance
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False}
    if args.address or os.environ.get("RAY_ADDRESS"):
        ray.init(address=args.address, **quiet)
        have = ray.cluster_resources().get("CPU", 0)
        if have < need:
            ray.shutdown()
            sys.exit(f"mutagraph_ray: the cluster has {have:g} CPUs; {args.instances} instances "
                     f"of {args.cpus_per_instance:g} need {need:g}: add nodes, or lower "
                     "--instances or --cpus-per-instance")
    else:
        cores = os.cpu_count() or 1
        if need > cores:
            log.warning("%d instances of %g CPUs on %d cores: the machine is oversubscribed",
                        args.instances, args.cpus_per_instance, cores)
        ray.init(num_cpus=max(cores, int(need + 0.999)), include_dashboard=False, **quiet)


def main(argv: list[str]) -> int:
    args, extra = parse_args(argv)
    sync_dir = args.sync_dir.resolve()
    sync_dir.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S",
                        handlers=[logging.StreamHandler(),
                                  logging.FileHandler(sync_dir / "ray-launcher.log")])
    # One launcher per directory: held until this process ends.
    lock = open(sync_dir / "ray-launcher.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        sys.exit(f"mutagraph_ray: another launcher is running on {sync_dir}")
    binary = find_binary(args.binary)
    plan = Plan(binary=binary, sync_dir=str(sync_dir), extra=tuple(extra), cwd=os.getcwd(),
                sync_flags=has_sync_flags(binary))
    settings = Settings(instances=args.instances, time_s=args.time, seed=args.seed,
                        cpus_per_instance=args.cpus_per_instance,
                        max_restarts=args.max_restarts, stop_grace_s=args.stop_grace,
                        address=args.address or os.environ.get("RAY_ADDRESS"))
    env = {k: v for k, v in os.environ.items() if FORWARDED_ENV.match(k)}
    # The actor's code travels with it: worker nodes need no copy of these files.
    ray.cloudpickle.register_pickle_by_value(mutagraph_ray_lib)
    connect(args)
    launcher = Launcher(settings, plan, env)
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, launcher.on_signal)
    log.info("%d instances in %s for %.0f s (%s), binary %s", args.instances, sync_dir,
             args.time, "--sync-dir" if plan.sync_flags else "--out", binary)
    try:
        launcher.run()
    finally:
        ray.shutdown()
    print(launcher.summary())
    failed = [i for i in launcher.instances if i.state == "failed"]
    for inst in failed:
        print(f"error: {inst.error}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

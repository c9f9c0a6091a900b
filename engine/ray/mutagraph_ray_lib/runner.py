"""An instance's command line, and the Ray actor that runs it on the node Ray placed it on."""

from __future__ import annotations

import dataclasses
import fcntl
import os
import socket
import subprocess
import sys
import threading
import time

import ray

MIN_RUN_S = 5.0  # an instance with less time left than this is not (re)started
LOCK_WAIT_S = 120.0  # how long a start waits for a previous process to release the directory


@dataclasses.dataclass(frozen=True)
class Plan:
    """What every instance's command line is made of."""

    binary: str  # absolute, the same on every node
    sync_dir: str  # absolute, on a filesystem every node mounts at the same path
    extra: tuple[str, ...]  # the campaign arguments given to the launcher
    cwd: str  # the launcher's directory: relative paths among `extra` are relative to it
    sync_flags: bool  # the binary has `campaign --sync-dir SYNC --instance NAME`


def campaign_argv(plan: Plan, name: str, seed: int, time_ms: int) -> list[str]:
    """The command line of instance `name` with `time_ms` left: the one place that builds it.
    Instance `name` writes SYNC/name either way."""
    if plan.sync_flags:
        where = ["--sync-dir", plan.sync_dir, "--instance", name]
    else:
        where = ["--out", os.path.join(plan.sync_dir, name)]
    return [plan.binary, "campaign", *where, "--time", f"{time_ms}ms", "--seed", str(seed),
            *plan.extra]


def wait_for_directory(out_dir: str, timeout: float) -> None:
    """Waits until no process holds the campaign lock of `out_dir` (`.lock`, taken with flock
    by the campaign). A previous run of the instance may still be ending; the lock of a lost
    node's process lasts until the shared filesystem's lease runs out."""
    path = os.path.join(out_dir, ".lock")
    end = time.time() + timeout
    while os.path.exists(path):
        with open(path, "rb") as f:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return  # free; closing the file releases it at once
            except BlockingIOError:
                holder = f.read().decode(errors="replace").strip()
        if time.time() > end:
            raise RuntimeError(f"{out_dir} is held by another campaign (pid {holder or '?'}) "
                               f"for {timeout:.0f} s and more")
        time.sleep(1)


# Exec'd between the fork and the binary, to give the campaign a clean start:
# - the signal mask cleared: a Ray worker's thread blocks SIGINT, and a child inherits the mask
#   through exec (the campaign would never see the SIGINT that asks it to stop);
# - SIGPIPE and SIGXFSZ back to their defaults (Python, this step included, ignores them);
# - on Linux, the kernel asked to SIGKILL the process when the Ray worker that started it dies,
#   so that a lost worker leaves no campaign behind holding its directory (a campaign resumes
#   exactly after a kill -9).
# A separate step because doing this in preexec_fn is unsafe in a process with threads, as a
# Ray worker is.
CLEAN_START = """
import ctypes, os, signal, sys
if sys.platform == "linux":
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1: PR_SET_PDEATHSIG
    if os.getppid() != int(sys.argv[1]):
        os._exit(128 + signal.SIGKILL)  # the worker died before prctl: as if killed with it
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
signal.pthread_sigmask(signal.SIG_SETMASK, [])
os.execv(sys.argv[2], sys.argv[2:])
"""


@ray.remote(max_restarts=0, max_task_retries=0)
class Runner:
    """Runs one instance's mutagraph process and tells how it ended. Never restarted by Ray:
    the driver's loop starts a new Runner instead.

    A default actor runs its methods on the worker's main thread. That matters: the kernel's
    parent-death signal fires when the thread that forked the child ends, and the main thread
    lives as long as the worker."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.ended: float | None = None

    def start(self, plan: Plan, name: str, seed: int, deadline: float, env: dict) -> dict:
        """Starts the instance with the time left until `deadline` (Unix time); returns its
        node, pid, start and command line, or {"error": why} or {"skipped": why}."""
        try:
            wait_for_directory(os.path.join(plan.sync_dir, name), LOCK_WAIT_S)
        except RuntimeError as e:
            return {"error": f"{e} (on {socket.gethostname()})"}
        if not os.access(plan.binary, os.X_OK):
            return {"error": f"{plan.binary} is not an executable file on {socket.gethostname()}"}
        now = time.time()
        if deadline - now < MIN_RUN_S:
            return {"skipped": f"{deadline - now:.1f} s left"}
        time_ms = int((deadline - now) * 1000)
        cmd = campaign_argv(plan, name, seed, time_ms)
        argv = [sys.executable, "-c", CLEAN_START, str(os.getpid()), *cmd]
        cwd = plan.cwd if os.path.isdir(plan.cwd) else plan.sync_dir
        with open(os.path.join(plan.sync_dir, f"ray-{name}.log"), "ab") as out:
            out.write(f"=== {time.strftime('%Y-%m-%dT%H:%M:%S%z')} on {socket.gethostname()}: "
                      f"{' '.join(cmd)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                         stderr=subprocess.STDOUT, env={**os.environ, **env},
                                         start_new_session=True)
        threading.Thread(target=self._wait, daemon=True).start()
        return {"node": ray.util.get_node_ip_address(), "host": socket.gethostname(),
                "pid": self.proc.pid, "start": now, "time_s": time_ms / 1000,
                "argv": cmd}

    def _wait(self) -> None:
        self.proc.wait()
        self.ended = time.time()

    def poll(self) -> dict | None:
        """None while the process runs; else its exit status and when it ended."""
        if self.ended is None:
            return None
        return {"returncode": self.proc.returncode, "end": self.ended}

    def signal(self, signum: int) -> None:
        """Sends `signum` to the process, if it still runs."""
        if self.proc is not None:
            self.proc.send_signal(signum)  # nothing once the process was reaped
